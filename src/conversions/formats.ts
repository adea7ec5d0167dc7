/**
 * Which documents can become what. A source's format comes from its sniffed type (never the
 * client's claim); the OLE container of old Office files and plain text are told apart by the
 * name's extension. Targets follow the wire-reference list, by what LibreOffice can export from
 * the source's kind of document; image targets are pages rendered from a PDF.
 */
import type { FileRecord } from '../core/file-record.js';
import type { DocumentFormat } from './paths.js';

export type DocumentKind = 'text' | 'sheet' | 'slides' | 'pdf';

export interface SourceDocument {
  /** Its format's name as GET /convert/document/{uuid}/ reports it (also the input file's extension). */
  name: string;
  kind: DocumentKind;
}

const BY_MIME: Record<string, SourceDocument> = {
  'application/pdf': { name: 'pdf', kind: 'pdf' },
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': { name: 'docx', kind: 'text' },
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': { name: 'xlsx', kind: 'sheet' },
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': { name: 'pptx', kind: 'slides' },
  'application/vnd.oasis.opendocument.text': { name: 'odt', kind: 'text' },
  'application/vnd.oasis.opendocument.spreadsheet': { name: 'ods', kind: 'sheet' },
  'application/vnd.oasis.opendocument.presentation': { name: 'odp', kind: 'slides' },
  'application/rtf': { name: 'rtf', kind: 'text' },
};

const OLE: Record<string, SourceDocument> = {
  doc: { name: 'doc', kind: 'text' },
  xls: { name: 'xls', kind: 'sheet' },
  ppt: { name: 'ppt', kind: 'slides' },
};

const TEXT: Record<string, SourceDocument> = {
  html: { name: 'html', kind: 'text' },
  htm: { name: 'html', kind: 'text' },
  csv: { name: 'csv', kind: 'sheet' },
  rtf: { name: 'rtf', kind: 'text' },
};

const IMAGES: DocumentFormat[] = ['jpg', 'enhanced.jpg', 'png'];

const TARGETS: Record<DocumentKind, DocumentFormat[]> = {
  text: ['pdf', 'doc', 'docx', 'odt', 'rtf', 'txt', ...IMAGES],
  sheet: ['pdf', 'xls', 'xlsx', 'ods', ...IMAGES],
  slides: ['pdf', ...IMAGES],
  pdf: ['txt', ...IMAGES],
};

const extension = (name: string): string => {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
};

/** The document a file is, or null when it is not one we convert. */
export function sourceDocument(file: Pick<FileRecord, 'mimeType' | 'originalFilename'>): SourceDocument | null {
  const known = BY_MIME[file.mimeType];
  if (known) return known;
  const ext = extension(file.originalFilename);
  if (file.mimeType === 'application/x-cfb') return OLE[ext] ?? { name: 'doc', kind: 'text' };
  if (file.mimeType === 'text/plain') return TEXT[ext] ?? { name: 'txt', kind: 'text' };
  return null;
}

export function targetsOf(source: SourceDocument): DocumentFormat[] {
  return TARGETS[source.kind].filter((f) => f !== source.name);
}

export const isImageTarget = (f: DocumentFormat): f is 'jpg' | 'png' | 'enhanced.jpg' => IMAGES.includes(f);
