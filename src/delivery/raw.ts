/** Delivery of a file's original bytes: ETag, ranges, disposition; from memory (originals cache) or streamed in constant memory. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { FileRecord } from '../core/file-record.js';
import { sendCdnError } from '../http/cdn/errors.js';
import { contentDisposition, type HeaderList, IMMUTABLE, SANDBOX_CSP, lastModified, notModified, parseRange } from '../http/cdn/headers.js';
import type { OriginalsCache } from './originals.js';
import { cdnErrors } from '../core/error-catalogue/media.js';

export interface RawOptions {
  filename: string | null;
  /** -/inline/yes|no/ override; null = inline for images, attachment otherwise. */
  inline: boolean | null;
}

/** A file row's answer headers for one URL's filename and disposition: the last URL's kept per row. */
interface RowHeaders {
  filename: string | null;
  inline: boolean | null;
  list: readonly (string | number)[];
}

/** Rows from the file cache are frozen and shared: a repeated URL copies its headers instead of building them. */
const headersByRow = new WeakMap<FileRecord, RowHeaders>();

export async function sendOriginal(req: IncomingMessage, res: ServerResponse, originals: OriginalsCache, file: FileRecord, opts: RawOptions): Promise<void> {
  // No MD5 yet (a large file whose digests come after its upload's answer, files/digest-later.ts):
  // no validator rather than a wrong one; Last-Modified still holds.
  const etag = file.md5 === '' ? null : `"${file.md5}"`;
  const headers = answerHeaders(file, opts, etag);
  if (etag && notModified(req, etag)) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  const range = parseRange(req.headers.range, file.size);
  if (range.kind === 'unsatisfiable') {
    sendCdnError(res, cdnErrors.rangeNotSatisfiable(file.size));
    return;
  }
  const partial = range.kind === 'partial';
  const length = partial ? range.end - range.start + 1 : file.size;
  if (partial) headers.push('content-range', `bytes ${range.start}-${range.end}/${file.size}`);
  headers.push('content-length', length);
  if (req.method === 'HEAD') {
    res.writeHead(partial ? 206 : 200, headers);
    res.end();
    return;
  }
  const key = file.blobKey as string;
  const original = await originals.get(key, file.size);
  if (original) {
    // One write of a shared buffer: no read, no copy, no stream machinery per request.
    res.writeHead(partial ? 206 : 200, headers);
    res.end(partial ? original.bytes.subarray(range.start, range.end + 1) : original.bytes);
    return;
  }
  const body = await originals.blobs.get(key, partial ? { start: range.start, end: range.end } : undefined);
  res.writeHead(partial ? 206 : 200, headers);
  await pipeline(body, res).catch(() => {
    // The client went away or the disk failed mid-body; the socket is already closed.
  });
}

/** The answer's headers but its length and range: a fresh list the caller adds to. */
function answerHeaders(file: FileRecord, opts: RawOptions, etag: string | null): HeaderList {
  const known = headersByRow.get(file);
  if (known !== undefined && known.filename === opts.filename && known.inline === opts.inline) return known.list.slice();
  const list = buildHeaders(file, opts, etag);
  if (Object.isFrozen(file)) headersByRow.set(file, { filename: opts.filename, inline: opts.inline, list });
  return list.slice();
}

function buildHeaders(file: FileRecord, opts: RawOptions, etag: string | null): HeaderList {
  const inline = opts.inline ?? file.mimeType.startsWith('image/');
  const headers: HeaderList = ['content-type', file.mimeType, 'content-disposition', contentDisposition(inline ? 'inline' : 'attachment', opts.filename ?? file.originalFilename)];
  if (etag) headers.push('etag', etag);
  headers.push('last-modified', lastModified(file.uploadedUs), 'cache-control', IMMUTABLE, 'accept-ranges', 'bytes', 'access-control-allow-origin', '*', 'x-content-type-options', 'nosniff');
  // SVG and HTML-ish originals could run script in our origin: sandbox them.
  if (/svg|html|xml/.test(file.mimeType)) headers.push('content-security-policy', SANDBOX_CSP);
  return headers;
}
