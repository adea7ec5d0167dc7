/**
 * A large body's MD5 and SHA-256, each digest in a thread of its own (digest-thread.ts): MD5 in
 * one, SHA-256 in the other, both fed the same bytes and hashing them at once: byte ranges of a
 * local file just written (written-digest.ts), or slabs of shared memory for bytes that are never
 * written locally (streamed-digest.ts, S3), or the parts of a multipart upload as they land
 * (uploads/multipart/running-digest.ts).
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
import type { BlobDigests } from './digest.js';
import { DigestThread } from './digest-thread.js';

/** The two threads (a small file's digests go to either: digestSmallFile). */
const threads = { md5: new DigestThread(), sha256: new DigestThread() };

/**
 * One body's two digests in the threads, fed its ranges (or shared-memory slabs) in order: MD5 in
 * one thread and SHA-256 in the other, at once. (Multipart's running digest once kept both in one
 * thread, one read per part: on a CPU with SHA-NI that chain, 2.8 s per GiB, made the completion
 * wait 0.8-1.2 s for it, against 0.1-0.25 s split; docs/performance.md.) A failure of either
 * thread rejects `hash` or `finish`; the caller then forgets this digest and reads the file again
 * (digestLocalFile), never answering with a digest of part of the bytes.
 */
export class ThreadDigests {
  private readonly md5 = threads.md5.newDigest(['md5']);
  private readonly sha256 = threads.sha256.newDigest(['sha256']);

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
    const [[md5], [sha256]] = await Promise.all([threads.md5.finish(this.md5), threads.sha256.finish(this.sha256)]);
    if (md5 === undefined || sha256 === undefined) throw new Error('the digest threads answered without both digests');
    return { md5, sha256 };
  }

  /** Drops both digests without reading them (a failed write, a spoiled or abandoned upload). */
  forget(): void {
    threads.md5.forget(this.md5);
    threads.sha256.forget(this.sha256);
  }
}

/** Which thread takes the next small file: they alternate, so neither queues every upload. */
let nextSmallInMd5Thread = true;

/**
 * MD5 and SHA-256 of `size` bytes of a small local file from `start` (a part's place in a data
 * file; 0 for a file of its own), both from one read in one of the two threads: one request and one
 * reply, where the split (a hash and a finish in each thread) would be four of each, more than a
 * small body's hashing saves on the main thread.
 */
export async function digestSmallFile(file: string, size: number, start = 0): Promise<BlobDigests> {
  const thread = nextSmallInMd5Thread ? threads.md5 : threads.sha256;
  nextSmallInMd5Thread = !nextSmallInMd5Thread;
  const [md5, sha256] = await thread.digestFile(file, start, size, ['md5', 'sha256']);
  if (md5 === undefined || sha256 === undefined) throw new Error('the digest thread answered without both digests');
  return { md5, sha256 };
}

/**
 * A whole file is hashed this much at a time, each step sent once the last is done: the threads
 * are shared, and a small upload's request waits behind one step (about 15 ms of MD5), never
 * behind a whole large file (about 2 s per GiB).
 */
const FILE_STEP = 8 * 1024 * 1024;

/**
 * MD5 and SHA-256 of the first `size` bytes of a local file from one read in one thread, a step at
 * a time: for work after the answer (files/digest-later.ts), where taking 2.8 s per GiB instead of
 * about 2 s costs no client anything, and one read and one thread's memory (about 10 MB) less
 * matter more. Always the same thread, so the other may stay asleep.
 */
export async function digestLocalFileInOneThread(file: string, size: number): Promise<BlobDigests> {
  const digest = threads.md5.newDigest(['md5', 'sha256']);
  try {
    for (let at = 0; at < size; at += FILE_STEP) await threads.md5.hash(digest, file, at, Math.min(FILE_STEP, size - at));
  } catch (err) {
    threads.md5.forget(digest);
    throw err;
  }
  const [md5, sha256] = await threads.md5.finish(digest);
  if (md5 === undefined || sha256 === undefined) throw new Error('the digest thread answered without both digests');
  return { md5, sha256 };
}

/** MD5 and SHA-256 of `size` bytes of a local file from `start`, hashed in the digest threads. */
export async function digestLocalFile(file: string, size: number, start = 0): Promise<BlobDigests & { size: number }> {
  const digests = new ThreadDigests();
  try {
    for (let at = 0; at < size; at += FILE_STEP) await digests.hash(file, start + at, Math.min(FILE_STEP, size - at));
  } catch (err) {
    digests.forget();
    throw err;
  }
  return { size, ...(await digests.finish()) };
}
