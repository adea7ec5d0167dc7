/**
 * The two digests every stored blob gets while its bytes are written: MD5 (the CDN's strong ETag)
 * and SHA-256 (the content address that identical uploads share, docs/storage.md). A body written
 * to a local file is hashed in the digest threads from the bytes just written, still in the page
 * cache (digest-threads.ts, written-digest.ts), never by a second read from the disk; one streamed
 * to S3 from its chunks as they pass (streamed-digest.ts).
 */
import crypto from 'node:crypto';

export interface BlobDigests {
  /** Lowercase hex MD5. */
  md5: string;
  /** Lowercase hex SHA-256. */
  sha256: string;
}

/**
 * Bodies up to this size are small. Written to a local file, a small body is hashed in one request
 * to a digest thread once all of it is written (written-digest.ts); streamed to S3, on the main
 * thread as its chunks pass (streamed-digest.ts: no file to read back, and a 4 MiB body is
 * 10-20 ms of hashing spread over its chunks). Larger bodies are hashed in both digest threads as
 * they arrive.
 */
export const SMALL_BODY_BYTES = 4 * 1024 * 1024;

/**
 * Whether a body declared `declaredBytes` long (a request's Content-Length, a multipart upload's
 * size; NaN when unknown) is stored without its digests, which a job computes after the answer
 * (`STOWAGE_DIGEST_LATER_BYTES`, `threshold`; 0 turns it off; files/digest-later.ts). Decided before
 * the first byte: a body hashed half-way would have wasted that half.
 */
export function digestsLaterFor(threshold: number, declaredBytes: number): boolean {
  return threshold > 0 && Number.isFinite(declaredBytes) && declaredBytes >= threshold;
}

/** An algorithm a digest thread computes (digest-thread.ts). */
export type DigestAlgorithm = 'md5' | 'sha256';

/** Both digests of bytes passed in order, on the calling thread: a small S3 body's, a stored blob read once. */
export class DigestStream {
  private readonly md5 = crypto.createHash('md5');
  private readonly sha256 = crypto.createHash('sha256');

  update(chunk: Buffer): void {
    this.md5.update(chunk);
    this.sha256.update(chunk);
  }

  digest(): BlobDigests {
    return { md5: this.md5.digest('hex'), sha256: this.sha256.digest('hex') };
  }
}
