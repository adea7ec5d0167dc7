/**
 * Document conversion with LibreOffice headless (office formats, PDF) and poppler (pages of a
 * PDF as images, PDF text). Every soffice process gets a private profile, HOME and TMPDIR inside
 * the job's work directory, so concurrent conversions never share state and removing the work
 * directory removes everything they wrote. Every tool is confined to the work directory
 * (src/launcher/sandbox.ts): whatever a document links to, it reaches no network address
 * and no other file; the profile also tells LibreOffice never to update links nor run macros.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { DocumentFormat, DocumentTarget } from './paths.js';
import { isImageTarget, type SourceDocument } from './formats.js';
import { runTool, ToolError } from './tool.js';
import { writeSafeProfile } from './profile.js';

export interface ConvertedFile {
  path: string;
  /** Extension of the output (`jpg` for enhanced.jpg). */
  ext: string;
  contentType: string;
  /** 1-based page number for page images, else null. */
  page: number | null;
}

/** soffice `--convert-to` argument per office target. */
const FILTERS: Partial<Record<DocumentFormat, string>> = {
  pdf: 'pdf',
  doc: 'doc:MS Word 97',
  docx: 'docx:MS Word 2007 XML',
  odt: 'odt',
  rtf: 'rtf:Rich Text Format',
  txt: 'txt:Text (encoded):UTF8',
  xls: 'xls:MS Excel 97',
  xlsx: 'xlsx:Calc MS Excel 2007 XML',
  ods: 'ods',
};

export const CONTENT_TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  odt: 'application/vnd.oasis.opendocument.text',
  rtf: 'application/rtf',
  txt: 'text/plain',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  jpg: 'image/jpeg',
  png: 'image/png',
};

/** Most pages one conversion renders (a group holds at most 1000 files). */
export const MAX_PAGES = 1000;
/** Largest page image in pixels; a bigger page is rendered at a lower dpi. */
const MAX_PAGE_PIXELS = 40_000_000;
const DEFAULT_DPI = 150;
const ENHANCED_DPI = 300;

export interface DocumentJob {
  input: string;
  source: SourceDocument;
  target: DocumentTarget;
  /** Every page (save_in_group with an image target), else the one page asked for. */
  allPages: boolean;
  workDir: string;
  deadline: number;
}

const remaining = (deadline: number): number => Math.max(1, deadline - Date.now());
/** Every tool of a job sees the job's work directory (its input is copied in there) and nothing else of ours. */
const inWork = (job: Pick<DocumentJob, 'workDir'>) => ({ read: [], write: [job.workDir] });

export async function convertDocument(job: DocumentJob): Promise<ConvertedFile[]> {
  const inDir = path.join(job.workDir, 'in');
  await fsp.mkdir(inDir, { recursive: true });
  const input = path.join(inDir, `document.${job.source.name}`);
  await fsp.copyFile(job.input, input);
  const format = job.target.format;
  if (!isImageTarget(format)) {
    if (format === 'txt' && job.source.kind === 'pdf') {
      const out = path.join(job.workDir, 'document.txt');
      await runTool('pdftotext', ['-enc', 'UTF-8', input, out], { timeoutMs: remaining(job.deadline), access: inWork(job), what: 'pdftotext' });
      return [{ path: out, ext: 'txt', contentType: CONTENT_TYPES['txt']!, page: null }];
    }
    const out = await soffice(input, job.source, format, job);
    return [{ path: out, ext: format, contentType: CONTENT_TYPES[format]!, page: null }];
  }
  const pdf = job.source.kind === 'pdf' ? input : await soffice(input, job.source, 'pdf', job);
  const sizes = await pageSizes(pdf, job);
  if (sizes.length === 0) throw new ToolError('The document has no pages.', true);
  const wanted = job.target.page ?? 1;
  if (!job.allPages && wanted > sizes.length) throw new ToolError(`Page ${wanted} is out of range: the document has ${sizes.length} page(s).`, true);
  if (job.allPages && sizes.length > MAX_PAGES) throw new ToolError(`The document has ${sizes.length} pages; at most ${MAX_PAGES} can be saved in a group.`, true);
  const pages = job.allPages ? sizes.map((_, i) => i + 1) : [wanted];
  const out: ConvertedFile[] = [];
  for (const page of pages) out.push(await renderPage(pdf, page, sizes[page - 1]!, job));
  return out;
}

/**
 * Import filters named rather than guessed. HTML opens in Writer proper (not Writer/Web), which
 * exports every office format. CSV: comma-separated, `"` quotes, UTF-8 (76), from line 1, whatever
 * LibreOffice would guess from the content or its locale.
 */
const INFILTER: Record<string, string> = {
  html: 'HTML (StarWriter)',
  csv: 'CSV:44,34,76,1',
};

/** A crashed soffice is run again only if at least this much of the job's time is left. */
const SOFFICE_RETRY_MIN_MS = 5_000;

async function soffice(input: string, source: SourceDocument, format: DocumentFormat, job: DocumentJob): Promise<string> {
  const filter = FILTERS[format];
  if (!filter) throw new Error(`no LibreOffice filter for ${format}`);
  const outDir = path.join(job.workDir, `out-${format}`);
  const home = path.join(job.workDir, 'home');
  await fsp.mkdir(outDir, { recursive: true });
  await fsp.mkdir(path.join(home, 'tmp'), { recursive: true });
  const args = (profile: string) => [
    `-env:UserInstallation=${pathToFileURL(path.join(job.workDir, profile)).href}`,
    '--headless', '--invisible', '--norestore', '--nolockcheck', '--nodefault', '--nologo',
    ...(INFILTER[source.name] ? [`--infilter=${INFILTER[source.name]}`] : []),
    '--convert-to', filter, '--outdir', outDir, input,
  ];
  const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: home, TMPDIR: path.join(home, 'tmp'), LANG: 'C.UTF-8' };
  const options = { timeoutMs: remaining(job.deadline), env, access: inWork(job), what: 'LibreOffice' };
  await writeSafeProfile(path.join(job.workDir, 'profile'));
  const run = await runTool('soffice', args('profile'), options).catch(async (err: unknown) => {
    // LibreOffice now and then aborts while it starts (exit 134, "terminate called after throwing
    // an instance of 'com::sun::star::lang::WrappedTargetRuntimeException'": seen in CI with four
    // starting at once on a fresh machine). A crash is not the document's fault: one more try, with
    // a fresh profile, while time is left.
    if (!(err instanceof ToolError && err.crashed) || remaining(job.deadline) < SOFFICE_RETRY_MIN_MS) throw err;
    await fsp.rm(outDir, { recursive: true, force: true });
    await fsp.mkdir(outDir, { recursive: true });
    await writeSafeProfile(path.join(job.workDir, 'profile-retry'));
    return runTool('soffice', args('profile-retry'), { ...options, timeoutMs: remaining(job.deadline) });
  });
  const produced = await fsp.readdir(outDir);
  if (produced.length !== 1) {
    // soffice exits 0 when it cannot load a file; the reason is in its output.
    const said = `${run.stderr}\n${run.stdout}`.split('\n').map((l) => l.trim()).find((l) => /error/i.test(l));
    throw new ToolError(`LibreOffice could not convert the ${source.name} document${said ? `: ${said.slice(0, 300)}` : ' (it may be corrupt)'}.`, true);
  }
  return path.join(outDir, produced[0]!);
}

/** Each page's size in points (pdfinfo), in page order. */
async function pageSizes(pdf: string, job: DocumentJob): Promise<Array<{ w: number; h: number }>> {
  const access = inWork(job);
  const info = await runTool('pdfinfo', [pdf], { timeoutMs: remaining(job.deadline), access, what: 'pdfinfo' }).catch((err: unknown) => {
    throw err instanceof ToolError ? new ToolError('The PDF could not be read (it may be corrupt).', true) : err;
  });
  const count = Number(/^Pages:\s+(\d+)/m.exec(info.stdout)?.[1] ?? 0);
  if (count === 0) return [];
  const last = Math.min(count, MAX_PAGES + 1);
  const detail = await runTool('pdfinfo', ['-f', '1', '-l', String(last), pdf], { timeoutMs: remaining(job.deadline), access, what: 'pdfinfo' });
  const sizes = new Map<number, { w: number; h: number }>();
  for (const m of detail.stdout.matchAll(/^Page\s+(\d+)\s+size:\s+([\d.]+)\s+x\s+([\d.]+)/gm)) sizes.set(Number(m[1]), { w: Number(m[2]), h: Number(m[3]) });
  const fallback = sizes.get(1) ?? { w: 612, h: 792 };
  return Array.from({ length: count }, (_, i) => sizes.get(i + 1) ?? fallback);
}

async function renderPage(pdf: string, page: number, size: { w: number; h: number }, job: DocumentJob): Promise<ConvertedFile> {
  const format = job.target.format;
  const jpeg = format !== 'png';
  let dpi = job.target.dpi ?? (format === 'enhanced.jpg' ? ENHANCED_DPI : DEFAULT_DPI);
  const inches = (size.w / 72) * (size.h / 72);
  if (inches > 0) dpi = Math.max(1, Math.min(dpi, Math.floor(Math.sqrt(MAX_PAGE_PIXELS / inches))));
  const quality = job.target.quality ?? (format === 'enhanced.jpg' ? 95 : 85);
  const prefix = path.join(job.workDir, `page-${page}`);
  const args = ['-f', String(page), '-l', String(page), '-r', String(dpi), '-singlefile', ...(jpeg ? ['-jpeg', '-jpegopt', `quality=${quality}`] : ['-png']), pdf, prefix];
  await runTool('pdftoppm', args, { timeoutMs: remaining(job.deadline), access: inWork(job), what: 'pdftoppm' });
  const ext = jpeg ? 'jpg' : 'png';
  return { path: `${prefix}.${ext}`, ext, contentType: CONTENT_TYPES[ext]!, page };
}
