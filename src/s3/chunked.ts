/**
 * Bodies in `Content-Encoding: aws-chunked` (x-amz-content-sha256 STREAMING-…): the AWS SDKs send
 * object bodies of unknown length this way, with each chunk signed (STREAMING-AWS4-HMAC-SHA256-
 * PAYLOAD) or unsigned with a checksum trailer (STREAMING-UNSIGNED-PAYLOAD-TRAILER). The decoder
 * passes the chunk data on without copying it, checks every chunk signature (chained from the
 * request's seed signature) and the trailing checksum, and fails the stream on anything else.
 */
import crypto from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { s3Error } from '../http/s3/errors.js';
import { checkChecksum, runningChecksum, type RunningChecksum } from './checksum.js';
import { hmac, sha256Hex, type SigningContext } from './sigv4.js';

const EMPTY_SHA256 = sha256Hex('');
const MAX_LINE = 4096;

export const STREAMING_SIGNED = 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD';
export const STREAMING_SIGNED_TRAILER = 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER';
export const STREAMING_UNSIGNED_TRAILER = 'STREAMING-UNSIGNED-PAYLOAD-TRAILER';

const incomplete = () => s3Error(400, 'IncompleteBody', 'The request body is not valid aws-chunked encoding or ended early.');
const badChunkSignature = () => s3Error(403, 'SignatureDoesNotMatch', 'A chunk signature does not match.');

export class AwsChunkedDecoder extends Transform {
  private line: Buffer[] = [];
  private lineBytes = 0;
  private remaining = 0;
  private state: 'size' | 'data' | 'data-end' | 'trailer' | 'done' = 'size';
  private chunkSignature = '';
  private chunkHash: crypto.Hash | null = null;
  private previousSignature: string;
  private decoded = 0;
  private readonly checksum: RunningChecksum | null;

  constructor(
    private readonly signing: SigningContext | null,
    private readonly expectedBytes: number | null,
    trailerName: string | null,
  ) {
    super();
    this.previousSignature = signing?.seedSignature ?? '';
    this.checksum = trailerName ? runningChecksum(trailerName) : null;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    try {
      let at = 0;
      while (at < chunk.length) {
        if (this.state === 'data') {
          const take = Math.min(this.remaining, chunk.length - at);
          const piece = chunk.subarray(at, at + take);
          this.chunkHash?.update(piece);
          this.checksum?.update(piece);
          this.push(piece);
          this.remaining -= take;
          this.decoded += take;
          at += take;
          if (this.remaining === 0) this.state = 'data-end';
          continue;
        }
        if (this.state === 'done') throw incomplete();
        const nl = chunk.indexOf(10, at);
        const end = nl === -1 ? chunk.length : nl + 1;
        this.line.push(chunk.subarray(at, end));
        this.lineBytes += end - at;
        if (this.lineBytes > MAX_LINE) throw incomplete();
        at = end;
        if (nl !== -1) this.onLine(Buffer.concat(this.line, this.lineBytes).toString('latin1').replace(/\r?\n$/, ''));
      }
      done();
    } catch (err) {
      done(err as Error);
    }
  }

  private onLine(text: string): void {
    this.line = [];
    this.lineBytes = 0;
    if (this.state === 'data-end') {
      if (text !== '') throw incomplete();
      this.verifyChunk();
      this.state = 'size';
    } else if (this.state === 'size') {
      const [size, ...ext] = text.split(';');
      if (!size || !/^[0-9a-fA-F]{1,16}$/.test(size)) throw incomplete();
      this.remaining = parseInt(size, 16);
      this.chunkSignature = ext.find((e) => e.startsWith('chunk-signature='))?.slice('chunk-signature='.length) ?? '';
      if (this.signing && !this.chunkSignature) throw badChunkSignature();
      this.chunkHash = this.signing ? crypto.createHash('sha256') : null;
      if (this.remaining > 0) this.state = 'data';
      else {
        this.verifyChunk();
        this.state = 'trailer';
      }
    } else if (this.state === 'trailer') {
      if (text === '') this.state = 'done';
      else this.onTrailer(text);
    }
  }

  private verifyChunk(): void {
    if (!this.signing) return;
    const hash = this.chunkHash ? this.chunkHash.digest('hex') : EMPTY_SHA256;
    const toSign = `AWS4-HMAC-SHA256-PAYLOAD\n${this.signing.amzDate}\n${this.signing.scope}\n${this.previousSignature}\n${EMPTY_SHA256}\n${hash}`;
    const expected = hmac(this.signing.key, toSign).toString('hex');
    if (!safeEqual(expected, this.chunkSignature)) throw badChunkSignature();
    this.previousSignature = expected;
    this.chunkHash = null;
  }

  private onTrailer(text: string): void {
    const colon = text.indexOf(':');
    if (colon <= 0) throw incomplete();
    const name = text.slice(0, colon).trim().toLowerCase();
    const value = text.slice(colon + 1).trim();
    // The trailer signature covers the checksum line; the checksum itself is what guards the bytes.
    if (name === 'x-amz-trailer-signature') return;
    if (this.checksum && name === this.checksum.header) checkChecksum(this.checksum, value);
  }

  override _flush(done: TransformCallback): void {
    // A body without trailers may end right after the last chunk's line.
    if (this.state === 'trailer' && this.lineBytes === 0) this.state = 'done';
    if (this.state !== 'done' || (this.expectedBytes !== null && this.decoded !== this.expectedBytes)) return done(incomplete());
    done();
  }
}

function safeEqual(a: string, b: string): boolean {
  return a.length === b.length && crypto.timingSafeEqual(Buffer.from(a), Buffer.from(b));
}
