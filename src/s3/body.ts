/**
 * An object body as it arrives (PutObject, UploadPart): plain, or aws-chunked; and the checks made
 * once the store has it: the signed payload hash (x-amz-content-sha256), Content-MD5 and an
 * `x-amz-checksum-*` header. The store computes MD5 and SHA-256 while writing, so the first two
 * cost nothing more; a mismatch discards the bytes.
 */
import { PassThrough, Transform, type Readable } from 'node:stream';
import type { PutResult } from '../blobs/store.js';
import { s3Error } from '../http/s3/errors.js';
import { AwsChunkedDecoder, STREAMING_SIGNED, STREAMING_SIGNED_TRAILER, STREAMING_UNSIGNED_TRAILER } from './chunked.js';
import { checkChecksum, runningChecksum, type RunningChecksum } from './checksum.js';
import type { Caller } from './auth.js';
import type { S3Request } from './request.js';

export interface ObjectBody {
  source: Readable;
  /** The declared length (Content-Length, or x-amz-decoded-content-length when aws-chunked); null when not declared. */
  length: number | null;
  /** Throws BadDigest / XAmzContentSHA256Mismatch when the stored bytes are not the ones signed. */
  verify(put: Pick<PutResult, 'md5' | 'sha256'>): void;
}

export const entityTooLarge = () => s3Error(400, 'EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size.');

/** `maxBytes`: a declared length above it is refused before a byte is read. */
export function objectBody(r: S3Request, caller: Caller, maxBytes = Number.MAX_SAFE_INTEGER): ObjectBody {
  const h = r.req.headers;
  const payload = caller.signed.payloadHash;
  const chunked = payload.startsWith('STREAMING-');
  const declared = chunked ? h['x-amz-decoded-content-length'] : h['content-length'];
  if (declared === undefined && h['transfer-encoding'] === undefined) throw s3Error(411, 'MissingContentLength', 'You must provide the Content-Length HTTP header.');
  const expected = declared === undefined ? null : Number(declared);
  if (expected !== null && !(Number.isSafeInteger(expected) && expected >= 0)) throw s3Error(400, 'InvalidArgument', 'The content length is not a number.');
  if (expected !== null && expected > maxBytes) throw entityTooLarge();
  let source: Readable;
  if (chunked) {
    if (![STREAMING_SIGNED, STREAMING_SIGNED_TRAILER, STREAMING_UNSIGNED_TRAILER].includes(payload)) throw s3Error(400, 'InvalidArgument', `Unsupported x-amz-content-sha256: ${payload}`);
    const trailer = typeof h['x-amz-trailer'] === 'string' ? h['x-amz-trailer'].trim().toLowerCase() : null;
    source = r.req.pipe(new AwsChunkedDecoder(payload === STREAMING_UNSIGNED_TRAILER ? null : caller.signing, expected, trailer));
    forwardErrors(r.req, source);
  } else {
    source = checksummed(r, expected);
  }
  const contentMd5 = h['content-md5'];
  return {
    source,
    length: expected,
    verify(put) {
      if (!chunked && /^[0-9a-f]{64}$/.test(payload) && put.sha256 !== null && put.sha256 !== payload) {
        throw s3Error(400, 'XAmzContentSHA256Mismatch', 'The provided \'x-amz-content-sha256\' header does not match what was computed.');
      }
      if (contentMd5 !== undefined && put.md5 !== '' && Buffer.from(put.md5, 'hex').toString('base64') !== String(contentMd5).trim()) {
        throw s3Error(400, 'BadDigest', 'The Content-MD5 you specified did not match what we received.');
      }
    },
  };
}

/** The plain body, through a running checksum when the client sent one as a header. */
function checksummed(r: S3Request, expected: number | null): Readable {
  const header = Object.keys(r.req.headers).find((k) => k.startsWith('x-amz-checksum-') && k !== 'x-amz-checksum-type' && k !== 'x-amz-checksum-algorithm');
  const sum = header ? runningChecksum(header) : null;
  if (!sum && expected === null) return r.req;
  // A pass-through of our own: a failing store destroys what it reads, never the request itself.
  const out = sum ? new ChecksumStream(sum, String(r.req.headers[header as string]), expected) : new LengthStream(expected);
  r.req.pipe(out);
  forwardErrors(r.req, out);
  return out;
}

function forwardErrors(from: Readable, to: Readable): void {
  from.once('error', (err) => to.destroy(err));
  // A client that goes away mid-body: the request ends without its last bytes.
  from.once('aborted', () => to.destroy(s3Error(400, 'IncompleteBody', 'You did not provide the number of bytes specified by the Content-Length HTTP header.')));
}

/** Checks that exactly the declared length arrived (a body cut short is not an object). */
class LengthStream extends PassThrough {
  private seen = 0;
  constructor(private readonly expected: number | null) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null, data?: Buffer) => void): void {
    this.seen += chunk.length;
    done(null, chunk);
  }
  override _flush(done: (err?: Error | null) => void): void {
    done(this.expected !== null && this.seen !== this.expected ? s3Error(400, 'IncompleteBody', 'You did not provide the number of bytes specified by the Content-Length HTTP header.') : null);
  }
}

class ChecksumStream extends Transform {
  private seen = 0;
  constructor(
    private readonly sum: RunningChecksum,
    private readonly expectedSum: string,
    private readonly expected: number | null,
  ) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null, data?: Buffer) => void): void {
    this.sum.update(chunk);
    this.seen += chunk.length;
    done(null, chunk);
  }
  override _flush(done: (err?: Error | null) => void): void {
    try {
      if (this.expected !== null && this.seen !== this.expected) throw s3Error(400, 'IncompleteBody', 'You did not provide the number of bytes specified by the Content-Length HTTP header.');
      checkChecksum(this.sum, this.expectedSum);
      done();
    } catch (err) {
      done(err as Error);
    }
  }
}
