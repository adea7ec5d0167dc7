/**
 * A large body's MD5 and SHA-256, each digest in a thread of its own (digest-thread.ts): MD5 in
 * one, SHA-256 in the other, both fed the same bytes and hashing them at once: byte ranges of a
 * local file just written (written-digest.ts, multipart's running-digest.ts), or slabs of shared
 * memory for bytes that are never written locally (streamed-digest.ts, S3).
 * Without SHA-NI, SHA-256 costs about 2.9 s of CPU per GiB and MD5 1.8 s; in one thread they were
 * a 4.7 s chain, and SHA-256 on the main thread (from a direct body's chunks as they passed) made
 * the main thread, which receives the bytes, the chain a large upload waited on
 * (docs/performance.md). Apart, the longer chain is SHA-256's alone (MD5's on a CPU with SHA-NI),
 * on a core other than the main thread's; each thread reads a file's ranges back from the page
 * cache (about 0.13 s per GiB each), which costs less than any hashing on the main thread.
 *
 * The two threads are shared by every upload of the node (two extra cores at most, never more
 * threads), started on first use and stopped when idle.
 */
import type { BlobDigests, DigestAlgorithm } from './digest.js';
import { DigestThread } from './digest-thread.js';

const threads: Record<DigestAlgorithm, DigestThread> = { md5: new DigestThread('md5'), sha256: new DigestThread('sha256') };

/**
 * One file's two digests in the threads, fed its ranges in order. A failure of either thread
 * rejects `hash` or `finish`; the caller then forgets this digest and reads the file again
 * (digestLocalFile), never answering with a digest of part of the bytes.
 */
export class ThreadDigests {
  private readonly md5 = threads.md5.newDigest();
  private readonly sha256 = threads.sha256.newDigest();

  /** Adds `length` bytes of `file` from `start` to both digests (after the ranges added before). */
  async hash(file: string, start: number, length: number): Promise<void> {
    await Promise.all([threads.md5.hash(this.md5, file, start, length), threads.sha256.hash(this.sha256, file, start, length)]);
  }

  /** Adds `bytes` (a view of shared memory, unchanged until this resolves) to both digests. */
  async hashBytes(bytes: Uint8Array): Promise<void> {
    await Promise.all([threads.md5.hashBytes(this.md5, bytes), threads.sha256.hashBytes(this.sha256, bytes)]);
  }

  /** Both digests of everything added; the threads forget them, whether this resolves or not. */
  async finish(): Promise<BlobDigests> {
    const [md5, sha256] = await Promise.all([threads.md5.finish(this.md5), threads.sha256.finish(this.sha256)]);
    return { md5, sha256 };
  }

  /** Drops both digests without reading them (a failed write, a spoiled or abandoned upload). */
  forget(): void {
    threads.md5.forget(this.md5);
    threads.sha256.forget(this.sha256);
  }
}

/** MD5 and SHA-256 of the first `size` bytes of a local file, hashed in the digest threads. */
export async function digestLocalFile(file: string, size: number): Promise<BlobDigests & { size: number }> {
  const digests = new ThreadDigests();
  try {
    await digests.hash(file, 0, size);
  } catch (err) {
    digests.forget();
    throw err;
  }
  return { size, ...(await digests.finish()) };
}
