/**
 * GetObject and HeadObject: the object's bytes from the same blob store the CDN reads (disk or S3),
 * streamed in constant memory, a byte range of them (`Range`), or 304 / 412 by the conditional
 * headers; its Content-Type, ETag, Last-Modified and `x-amz-meta-*` as PutObject took them.
 */
import { pipeline } from 'node:stream/promises';
import type { BlobStore, ByteRange } from '../blobs/store.js';
import type { ReadOriginal } from '../feature.js';
import { lastModified, parseRange, SANDBOX_CSP } from '../http/cdn/headers.js';
import { s3Error } from '../http/s3/errors.js';
import type { ObjectRow } from './repo.js';
import type { S3Request } from './request.js';

/** The ETag of an object as S3 quotes it; null while a large file's MD5 is still being computed. */
export function etagOf(o: Pick<ObjectRow, 'etag' | 'md5'>): string | null {
  if (o.etag) return `"${o.etag}"`;
  return o.md5 === '' ? null : `"${o.md5}"`;
}

/** Presigned GETs may override these answer headers (`response-content-type=…`). */
const OVERRIDES: Array<[string, string]> = [
  ['response-content-type', 'content-type'],
  ['response-content-disposition', 'content-disposition'],
  ['response-content-encoding', 'content-encoding'],
  ['response-content-language', 'content-language'],
  ['response-cache-control', 'cache-control'],
  ['response-expires', 'expires'],
];

/** Metadata values go out as given when a header can carry them, else RFC 2047-encoded (as S3 does). */
function metaValue(value: string): string {
  // eslint-disable-next-line no-control-regex
  return /^[\u0020-\u007e]*$/.test(value) ? value : `=?UTF-8?B?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/**
 * Answer headers as `writeHead` takes them written as given: `[name, value, name, value, …]`, the
 * names lower-case and each at most once.
 */
type HeaderList = Array<string | number>;

/** Rows served from the object cache are frozen and shared: their headers are built once each. */
const headersByRow = new WeakMap<ObjectRow, readonly (string | number)[]>();

/** The object's answer headers, a fresh list the caller may add to. */
export function objectHeaders(o: ObjectRow): HeaderList {
  let headers = headersByRow.get(o);
  if (headers === undefined) {
    headers = buildHeaders(o);
    if (Object.isFrozen(o)) headersByRow.set(o, headers);
  }
  return headers.slice();
}

function buildHeaders(o: ObjectRow): HeaderList {
  const etag = etagOf(o);
  const headers: HeaderList = ['content-type', o.contentType || 'application/octet-stream', 'last-modified', lastModified(o.uploadedUs), 'accept-ranges', 'bytes', 'x-content-type-options', 'nosniff'];
  if (etag) headers.push('etag', etag);
  // A browser opening a presigned URL of HTML or SVG must not run its script in this origin.
  if (/svg|html|xml/.test(o.contentType)) headers.push('content-security-policy', SANDBOX_CSP);
  const meta = new Map<string, string>();
  for (const [k, v] of Object.entries(o.metadata)) meta.set(`x-amz-meta-${k.toLowerCase()}`, metaValue(v));
  for (const [name, value] of meta) headers.push(name, value);
  return headers;
}

/** Sets `name` (lower-case) in the list: its value replaced when present, else added. */
function setHeader(headers: HeaderList, name: string, value: string | number): void {
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i] === name) {
      headers[i + 1] = value;
      return;
    }
  }
  headers.push(name, value);
}

/** 304 or 412 when a conditional header says so (RFC 9110 order: If-Match, If-Unmodified-Since, If-None-Match, If-Modified-Since). */
function precondition(r: S3Request, o: ObjectRow): 304 | 412 | null {
  const h = r.req.headers;
  // Most reads send none: no ETag text nor matcher made for them.
  if (h['if-match'] === undefined && h['if-none-match'] === undefined && h['if-modified-since'] === undefined && h['if-unmodified-since'] === undefined) return null;
  const etag = etagOf(o);
  const matches = (list: string) => list.split(',').some((t) => t.trim() === '*' || (etag !== null && t.trim().replace(/^W\//, '') === etag));
  const modifiedS = Math.floor(o.uploadedUs / 1e6);
  const since = (text: string | undefined) => (text ? Date.parse(text) / 1000 : NaN);
  if (h['if-match'] !== undefined && !matches(h['if-match'])) return 412;
  if (h['if-match'] === undefined && modifiedS > since(h['if-unmodified-since'])) return 412;
  if (h['if-none-match'] !== undefined) return matches(h['if-none-match']) ? 304 : null;
  if (modifiedS <= since(h['if-modified-since'])) return 304;
  return null;
}

/**
 * Answers GetObject or HeadObject for `o`; without a promise when the answer needs no read (a
 * small object's bytes in the originals cache, a HEAD, a 304), else the promise of the rest.
 */
export function sendObject(r: S3Request, o: ObjectRow, blobs: BlobStore, originals: ReadOriginal): Promise<void> | undefined {
  const headers = objectHeaders(o);
  if (r.query.hasNameStarting('response-')) {
    for (const [param, header] of OVERRIDES) {
      const v = r.query.get(param);
      if (v !== null) setHeader(headers, header, v);
    }
  }
  const cond = precondition(r, o);
  if (cond === 412) throw s3Error(412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold');
  if (cond === 304) {
    r.res.writeHead(304, headers).end();
    return;
  }
  const range = parseRange(r.req.headers.range, o.size);
  if (range.kind === 'unsatisfiable') throw s3Error(416, 'InvalidRange', 'The requested range is not satisfiable', { 'content-range': `bytes */${o.size}` });
  const partial = range.kind === 'partial';
  if (partial) headers.push('content-range', `bytes ${range.start}-${range.end}/${o.size}`);
  headers.push('content-length', partial ? range.end - range.start + 1 : o.size);
  const status = partial ? 206 : 200;
  if (r.method === 'HEAD' || o.size === 0) {
    r.res.writeHead(status, headers).end();
    return;
  }
  if (!o.blobKey) throw s3Error(404, 'NoSuchKey', 'The specified key does not exist.');
  const held = originals.held(o.blobKey);
  if (held) return void sendBytes(r, status, headers, held, partial ? range : null);
  return sendRead(r, o.blobKey, o.size, status, headers, partial ? range : null, blobs, originals);
}

/** One write of a shared buffer, as the CDN's raw delivery: no open, read or stream per request. */
function sendBytes(r: S3Request, status: number, headers: HeaderList, original: Buffer, range: ByteRange | null): void {
  r.res.writeHead(status, headers).end(range ? original.subarray(range.start, range.end + 1) : original);
}

async function sendRead(r: S3Request, blobKey: string, size: number, status: number, headers: HeaderList, range: ByteRange | null, blobs: BlobStore, originals: ReadOriginal): Promise<void> {
  const original = await originals.read(blobKey, size);
  if (original) return sendBytes(r, status, headers, original, range);
  const body = await blobs.get(blobKey, range ?? undefined);
  r.res.writeHead(status, headers);
  await pipeline(body, r.res).catch(() => {
    // The client went away or the store failed mid-body; the socket is closed either way.
  });
}
