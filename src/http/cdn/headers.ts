/** Header helpers for CDN delivery: disposition, ranges, conditional requests. */
import type { IncomingMessage } from 'node:http';

/**
 * Answer headers as `writeHead` takes them written as given: `[name, value, name, value, …]`, the
 * names lower-case and each at most once (the surface's response class adds the request id:
 * `responseAnsweringId` in http/common/request-id.ts).
 */
export type HeaderList = Array<string | number>;

/** For stored bytes that a browser could run as a page (SVG, HTML, XML): no script, no loads. */
export const SANDBOX_CSP = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/** One year: CDN URLs are immutable (a file's bytes never change under its uuid). */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

/** Last-Modified text per upload time: Date formatting is measurable on the hot path. */
const httpDates = new Map<number, string>();

export function lastModified(uploadedUs: number): string {
  let text = httpDates.get(uploadedUs);
  if (!text) {
    if (httpDates.size > 10_000) httpDates.clear();
    text = new Date(uploadedUs / 1000).toUTCString();
    httpDates.set(uploadedUs, text);
  }
  return text;
}

export function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  // A download name, never a path: separators and control characters go.
  // eslint-disable-next-line no-control-regex
  const filename = name.replace(/[\/\\\u0000-\u001f\u007f]/g, '_');
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const needsExtended = ascii !== filename;
  const base = `${kind}; filename="${ascii}"`;
  return needsExtended ? `${base}; filename*=UTF-8''${encodeURIComponent(filename)}` : base;
}

export type RangeResult = { kind: 'full' } | { kind: 'partial'; start: number; end: number } | { kind: 'unsatisfiable' };

/**
 * Parses a single `bytes=` range against `size`. Multiple ranges and unknown units fall back to
 * the full body (allowed by RFC 9110); a syntactically valid range past the end is 416.
 */
export function parseRange(header: string | undefined, size: number): RangeResult {
  if (!header) return { kind: 'full' };
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return { kind: 'full' };
  const [, a = '', b = ''] = m;
  if (a === '' && b === '') return { kind: 'full' };
  if (a === '') {
    const suffix = Number(b);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(a);
  const end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  if (start >= size || (b !== '' && Number(b) < start)) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end };
}

/** True when If-None-Match names our ETag (or `*`). */
export function notModified(req: IncomingMessage, etag: string): boolean {
  const inm = req.headers['if-none-match'];
  if (!inm) return false;
  return inm.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === etag || tag === '*';
  });
}
