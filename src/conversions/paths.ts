/**
 * Conversion paths as POST /convert/document/ and /convert/video/ take them (wire-reference §2.12):
 *   <uuid>/document/-/format/<fmt>/[-/page/<n>/][-/dpi/<n>/][-/quality/<n>/]
 *   <uuid>/video/[-/size/<W>x<H>/[<mode>/]][-/quality/<q>/][-/format/<f>/][-/cut/<start>/<length>/][-/thumbs~<N>/]
 * optionally behind a CDN URL prefix. Pure: strings in, a typed target or the problem text out.
 */
import { parseUuid } from '../core/ids.js';

export const DOCUMENT_FORMATS = ['pdf', 'doc', 'docx', 'xls', 'xlsx', 'odt', 'ods', 'rtf', 'txt', 'jpg', 'enhanced.jpg', 'png'] as const;
export type DocumentFormat = (typeof DOCUMENT_FORMATS)[number];

export const VIDEO_FORMATS = ['mp4', 'webm', 'ogg'] as const;
export type VideoFormat = (typeof VIDEO_FORMATS)[number];
export const SIZE_MODES = ['preserve_ratio', 'change_ratio', 'scale_crop', 'add_padding'] as const;
export type SizeMode = (typeof SIZE_MODES)[number];
export const VIDEO_QUALITIES = ['normal', 'better', 'best', 'lighter', 'lightest'] as const;
export type VideoQuality = (typeof VIDEO_QUALITIES)[number];

export interface DocumentTarget {
  format: DocumentFormat;
  /** 1-based page for image targets; null: the first page (or every page with save_in_group). */
  page: number | null;
  dpi: number | null;
  quality: number | null;
}

export interface VideoTarget {
  /** Sides are multiples of 4; one may be null (kept in proportion). */
  size: { width: number | null; height: number | null; mode: SizeMode } | null;
  quality: VideoQuality;
  format: VideoFormat;
  cut: { startMs: number; lengthMs: number | null } | null;
  /** How many thumbnails make the thumbnails group (default 1). */
  thumbs: number;
}

export type Parsed<T> = { ok: true; uuid: string; target: T } | { ok: false; problem: string };

export const MAX_VIDEO_SIDE = 4096;
export const MAX_THUMBS = 50;
export const MAX_PAGE = 10_000;

const badPath = (path: string): { ok: false; problem: string } => ({ ok: false, problem: `Bad path "${path}". Use UUID or CDN URL` });
const problem = (path: string, why: string): { ok: false; problem: string } => ({ ok: false, problem: `Bad path "${path}": ${why}` });
/**
 * An operation neither converter knows: the public service's text, which the official REST
 * client's suite asserts as the path's problem (its poller reports it as a failed job).
 */
const unknownOperation = (name: string): { ok: false; problem: string } => ({ ok: false, problem: `Operations parsing: Cannot parse url part: ${name}` });

/** Splits `[https://host/]<uuid>/<kind>/<segments…>`; null when the uuid or the kind is not there. */
function split(path: string, kind: 'document' | 'video'): { uuid: string; segments: string[] } | null {
  let rest = path.trim();
  if (rest.length === 0 || rest.length > 2048) return null;
  if (/^https?:\/\//i.test(rest)) {
    try {
      rest = new URL(rest).pathname;
    } catch {
      return null;
    }
  }
  const parts = rest.split('/').filter((s) => s !== '');
  const uuid = parseUuid(parts[0] ?? '');
  if (!uuid || parts[1] !== kind) return null;
  let segments: string[];
  try {
    segments = parts.slice(2).map((s) => decodeURIComponent(s));
  } catch {
    return null;
  }
  return { uuid, segments };
}

/** `-/a/b/-/c/` -> [['a','b'], ['c']]; null when a group does not start with '-'. */
function operations(segments: string[]): string[][] | null {
  const ops: string[][] = [];
  for (const s of segments) {
    if (s === '-') ops.push([]);
    else if (ops.length === 0) return null;
    else ops[ops.length - 1]!.push(s);
  }
  return ops;
}

const intIn = (text: string | undefined, min: number, max: number): number | null => {
  if (text === undefined || !/^\d{1,6}$/.test(text)) return null;
  const n = Number(text);
  return n >= min && n <= max ? n : null;
};

export function parseDocumentPath(path: string): Parsed<DocumentTarget> {
  const s = split(path, 'document');
  if (!s) return badPath(path);
  const ops = operations(s.segments);
  if (!ops) return problem(path, 'operations must follow "-/".');
  const target: Partial<DocumentTarget> = {};
  for (const [name, ...args] of ops) {
    if (name === 'format') {
      const fmt = (args[0] ?? '').toLowerCase();
      if (!(DOCUMENT_FORMATS as readonly string[]).includes(fmt)) {
        return problem(path, `unsupported target format "${args[0] ?? ''}" (supported: ${DOCUMENT_FORMATS.join(', ')}).`);
      }
      target.format = fmt as DocumentFormat;
    } else if (name === 'page') {
      const page = intIn(args[0], 1, MAX_PAGE);
      if (page === null) return problem(path, `"page" must be a page number from 1 to ${MAX_PAGE}.`);
      target.page = page;
    } else if (name === 'dpi') {
      const dpi = intIn(args[0], 20, 600);
      if (dpi === null) return problem(path, '"dpi" must be a number from 20 to 600.');
      target.dpi = dpi;
    } else if (name === 'quality') {
      const q = intIn(args[0], 1, 100);
      if (q === null) return problem(path, '"quality" must be a number from 1 to 100.');
      target.quality = q;
    } else {
      return unknownOperation(name ?? '');
    }
    if (args.length > 1) return problem(path, `too many arguments for "${name}".`);
  }
  if (!target.format) return problem(path, 'the target format is required ("-/format/<format>/").');
  const image = target.format === 'jpg' || target.format === 'png' || target.format === 'enhanced.jpg';
  if (!image && (target.page !== undefined || target.dpi !== undefined || target.quality !== undefined)) {
    return problem(path, '"page", "dpi" and "quality" apply only to the jpg, enhanced.jpg and png formats.');
  }
  return { ok: true, uuid: s.uuid, target: { format: target.format, page: target.page ?? null, dpi: target.dpi ?? null, quality: target.quality ?? null } };
}

/** `HHH:MM:SS.sss`, `MM:SS`, `SS.sss` -> milliseconds; null when malformed. */
export function parseTime(text: string): number | null {
  const m = /^(?:(?:(\d{1,3}):)?(\d{1,2}):)?(\d{1,6})(?:\.(\d{1,3}))?$/.exec(text);
  if (!m) return null;
  const [, h = '0', min = '0', sec = '0', frac = ''] = m;
  if (m[2] !== undefined && Number(sec) >= 60) return null;
  if (m[1] !== undefined && Number(min) >= 60) return null;
  return ((Number(h) * 60 + Number(min)) * 60 + Number(sec)) * 1000 + Number(frac.padEnd(3, '0'));
}

export function parseVideoPath(path: string): Parsed<VideoTarget> {
  const s = split(path, 'video');
  if (!s) return badPath(path);
  const ops = operations(s.segments);
  if (!ops) return problem(path, 'operations must follow "-/".');
  const target: VideoTarget = { size: null, quality: 'normal', format: 'mp4', cut: null, thumbs: 1 };
  for (let i = 0; i < ops.length; i++) {
    const [name = '', ...args] = ops[i]!;
    const thumbs = /^thumbs~(\d{1,3})$/.exec(name);
    if (thumbs) {
      const n = Number(thumbs[1]);
      if (n < 1 || n > MAX_THUMBS) return problem(path, `"thumbs~N" takes N from 1 to ${MAX_THUMBS}.`);
      if (i !== ops.length - 1 || args.length > 0) return problem(path, '"thumbs~N" must be the last operation.');
      target.thumbs = n;
    } else if (name === 'size') {
      const m = /^(\d{1,5})?x(\d{1,5})?$/.exec(args[0] ?? '');
      if (!m || (m[1] === undefined && m[2] === undefined)) return problem(path, '"size" takes <width>x<height> (one side may be left out).');
      const side = (t: string | undefined): number | null | false => {
        if (t === undefined) return null;
        const n = Number(t);
        return n >= 4 && n <= MAX_VIDEO_SIDE ? n - (n % 4) : false;
      };
      const width = side(m[1]);
      const height = side(m[2]);
      if (width === false || height === false) return problem(path, `"size" sides must be from 4 to ${MAX_VIDEO_SIDE}.`);
      const mode = (args[1] ?? 'preserve_ratio') as SizeMode;
      if (!SIZE_MODES.includes(mode)) return problem(path, `unknown size mode "${args[1]}" (supported: ${SIZE_MODES.join(', ')}).`);
      if (mode !== 'preserve_ratio' && (width === null || height === null)) return problem(path, `size mode "${mode}" needs both sides.`);
      if (args.length > 2) return problem(path, 'too many arguments for "size".');
      target.size = { width, height, mode };
    } else if (name === 'quality') {
      const q = args[0] as VideoQuality;
      if (!VIDEO_QUALITIES.includes(q) || args.length > 1) return problem(path, `unknown quality "${args[0] ?? ''}" (supported: ${VIDEO_QUALITIES.join(', ')}).`);
      target.quality = q;
    } else if (name === 'format') {
      const f = (args[0] ?? '').toLowerCase() as VideoFormat;
      if (!VIDEO_FORMATS.includes(f) || args.length > 1) return problem(path, `unsupported target format "${args[0] ?? ''}" (supported: ${VIDEO_FORMATS.join(', ')}).`);
      target.format = f;
    } else if (name === 'cut') {
      const start = parseTime(args[0] ?? '');
      const length = args[1] === 'end' ? null : parseTime(args[1] ?? '');
      if (start === null || (length === null && args[1] !== 'end') || length === 0 || args.length !== 2) {
        return problem(path, '"cut" takes <start>/<length> as HHH:MM:SS.sss (length may be "end").');
      }
      target.cut = { startMs: start, lengthMs: length };
    } else {
      return unknownOperation(name);
    }
  }
  return { ok: true, uuid: s.uuid, target };
}
