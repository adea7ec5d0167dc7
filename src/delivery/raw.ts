/** Delivery of a file's original bytes: ETag, ranges, disposition; from memory (originals cache) or streamed in constant memory. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { FileRecord } from '../core/file-record.js';
import { sendCdnError } from '../http/cdn/errors.js';
import { contentDisposition, IMMUTABLE, lastModified, notModified, parseRange } from '../http/cdn/headers.js';
import type { OriginalsCache } from './originals.js';
import { cdnErrors } from '../core/error-catalogue/media.js';

export interface RawOptions {
  filename: string | null;
  /** -/inline/yes|no/ override; null = inline for images, attachment otherwise. */
  inline: boolean | null;
}

export async function sendOriginal(req: IncomingMessage, res: ServerResponse, originals: OriginalsCache, file: FileRecord, opts: RawOptions): Promise<void> {
  // No MD5 yet (a large file whose digests come after its upload's answer, files/digest-later.ts):
  // no validator rather than a wrong one; Last-Modified still holds.
  const etag = file.md5 === '' ? null : `"${file.md5}"`;
  const inline = opts.inline ?? file.mimeType.startsWith('image/');
  const headers: Record<string, string | number> = {
    'content-type': file.mimeType,
    'content-disposition': contentDisposition(inline ? 'inline' : 'attachment', opts.filename ?? file.originalFilename),
    ...(etag ? { etag } : {}),
    'last-modified': lastModified(file.uploadedUs),
    'cache-control': IMMUTABLE,
    'accept-ranges': 'bytes',
    'access-control-allow-origin': '*',
    'x-content-type-options': 'nosniff',
  };
  // SVG and HTML-ish originals could run script in our origin: sandbox them.
  if (/svg|html|xml/.test(file.mimeType)) headers['content-security-policy'] = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:";
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
  if (partial) headers['content-range'] = `bytes ${range.start}-${range.end}/${file.size}`;
  headers['content-length'] = length;
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
