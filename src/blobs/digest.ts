/**
 * The two digests every stored blob gets while its bytes stream past: MD5 (the CDN's strong ETag)
 * and SHA-256 (the content address that identical uploads share, docs/storage.md). Both are
 * computed while the bytes are written: a small body's from its chunks as they pass, a large
 * body's in the digest threads from the bytes just written, still in the page cache
 * (digest-threads.ts), never by a second read from the disk.
 */
import crypto from 'node:crypto';

export interface BlobDigests {
  /** Lowercase hex MD5. */
  md5: string;
  /** Lowercase hex SHA-256. */
  sha256: string;
}

/**
 * Bodies up to this size are hashed inline on the main thread as their chunks pass (4 MiB: 10-20 ms
 * of hashing spread over its chunks, with or without SHA-NI; no thread round trip); larger ones in
 * the digest threads (written-digest.ts, streamed-digest.ts).
 */
export const INLINE_DIGEST_BYTES = 4 * 1024 * 1024;

/** The algorithm a digest thread computes (digest-thread.ts): one thread per algorithm. */
export type DigestAlgorithm = 'md5' | 'sha256';

/** Both digests of bytes passed in order: a small body's on the main thread, a stored blob read once. */
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
