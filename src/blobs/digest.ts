/**
 * The two digests every stored blob gets while its bytes stream past: MD5 (the CDN's strong ETag)
 * and SHA-256 (the content address that identical uploads share, docs/storage.md). Both are
 * computed in the one pass that writes the bytes, never by reading them back.
 */
import crypto from 'node:crypto';
import type { BlobStore } from './store.js';

export interface BlobDigests {
  /** Lowercase hex MD5. */
  md5: string;
  /** Lowercase hex SHA-256. */
  sha256: string;
}

/**
 * What the digest thread computes for one digest: both, or MD5 alone while the main thread hashes
 * SHA-256 of a body's chunks as they pass (written-digest.ts): MD5 and SHA-256 in one thread were
 * a 2.1 s per GiB chain that the end of a large direct upload waited on (docs/performance.md).
 */
export type DigestAlgorithms = 'md5' | 'md5+sha256';

/** MD5 alone, with DigestStream's shape (its `sha256` absent). */
export class Md5Stream {
  private readonly md5 = crypto.createHash('md5');

  update(chunk: Buffer): void {
    this.md5.update(chunk);
  }

  digest(): { md5: string; sha256?: undefined } {
    return { md5: this.md5.digest('hex') };
  }
}

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

/**
 * Size and digests of a blob already in the store, read once: for bytes that arrived without
 * passing through a node (S3 multipart parts) or that a dead process wrote.
 */
export async function digestStored(blobs: BlobStore, key: string): Promise<BlobDigests & { size: number }> {
  const digests = new DigestStream();
  let size = 0;
  for await (const chunk of await blobs.get(key)) {
    size += (chunk as Buffer).length;
    digests.update(chunk as Buffer);
  }
  return { size, ...digests.digest() };
}
