/** The domain shape of a file, independent of storage and of any wire format. */
import type { z } from 'zod';
import type { appdataEntrySchema, contentInfoSchema, imageInfoSchema, videoInfoSchema } from './wire-shapes.js';

// The facts of a file as the wire shows them: declared once, as schemas (wire-shapes.ts).
export type ImageInfo = z.output<typeof imageInfoSchema>;
export type VideoInfo = z.output<typeof videoInfoSchema>;
export type ContentInfo = z.output<typeof contentInfoSchema>;
export type AppdataEntry = z.output<typeof appdataEntrySchema>;

/** Whether an upload is stored: explicitly, or as the project's autostore setting says. */
export type StoreChoice = boolean | 'auto';

/** Where a file's bytes live in the blob store: fixed by its uuid, so every writer agrees. */
export function fileBlobKey(uuid: string): string {
  return `files/${uuid.slice(0, 2)}/${uuid}`;
}

export interface FileRecord {
  uuid: string;
  projectId: number;
  uploadedUs: number;
  storedUs: number | null;
  removedUs: number | null;
  size: number;
  /** What the bytes are (sniffed, = content_info.mime): the only type delivery and processing may trust. */
  mimeType: string;
  /** The wire's `mime_type`: what the client declared, or the name's extension's type (core/declared-type.ts). */
  declaredType: string;
  originalFilename: string;
  /** Sanitized name used in URLs. */
  filename: string;
  isImage: boolean;
  isReady: boolean;
  contentInfo: ContentInfo | null;
  metadata: Record<string, string>;
  appdata: Record<string, AppdataEntry>;
  blobKey: string | null;
  md5: string;
  sourceUrl: string | null;
  /** Normalized tags in the order first given (core/tags.ts). */
  tags: string[];
  /** The S3 key it was written under (PutObject); absent for files uploaded any other way. */
  objectKey?: string;
  /** The S3 ETag of an object assembled from parts; absent when the ETag is the MD5. */
  objectEtag?: string;
}

/**
 * The upload API's `filename`: every character outside A-Z a-z 0-9 _ dropped from the stem, the
 * last extension kept (observed behaviour of the public service).
 */
export function sanitizeFilename(original: string): string {
  const base = original.split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  const stem = dot > 0 ? base.slice(0, dot) : base;
  const ext = dot > 0 ? base.slice(dot + 1).replace(/[^A-Za-z0-9]/g, '') : '';
  const cleanStem = stem.replace(/[^A-Za-z0-9_]/g, '') || (stem ? '_' : 'file');
  return ext ? `${cleanStem}.${ext.toLowerCase()}` : cleanStem;
}

/** Client-side paths (pyuploadcare sends whole paths) reduced to the base name, control chars removed. */
export function cleanOriginalFilename(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 255);
  return clean || 'original';
}
