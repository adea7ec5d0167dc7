/**
 * MD5 and SHA-256 of a body being written into a file (a new file, or an S3 part's slot in its
 * upload's data file, from `base`), computed in the digest threads from the bytes just written (page
 * cache), so the main thread, which receives the bytes, hashes none of them:
 * - a small body (up to SMALL_BODY_BYTES) in one request to one thread, both digests from one read,
 *   sent once every byte is written and answered while the file is being synced. Hashed inline, a
 *   64 KiB upload's two digests were 13 % of the main thread's busy time at 64 clients on two
 *   cores (0.17 ms per upload with SHA-NI), where a request and its reply cost a few tens of µs;
 * - a large body in both threads at once, MD5 in one and SHA-256 in the other, from its first byte,
 *   each reading back the batches the writer has just written in steps of HASH_STEP. On a CPU
 *   without SHA-NI, SHA-256 from the chunks as they passed cost the main thread 2.9 s per GiB and
 *   made it the chain a 1 GiB direct upload waited on (docs/performance.md).
 *
 * - a small body on a node that can run on one CPU only (its affinity: a container's cpuset, a
 *   one-core machine) on the main thread, from the chunks as they pass: there a digest thread
 *   shares the main thread's core, so it hashes nothing sooner, and its request, its read of the
 *   file and its reply (about twice the hashing's own CPU for 64 KiB) are pure cost. The caller
 *   says the body is small before its first byte (`mayHashInline`: its size is bounded), so no
 *   byte is ever hashed twice.
 *
 * A thread that fails loses its digest; `digest` then reads the whole file again in the threads
 * (digestLocalFile), never answering with a digest of part of the bytes.
 */
import os from 'node:os';
import { DigestStream, SMALL_BODY_BYTES, type BlobDigests } from './digest.js';
import { ThreadDigests, digestLocalFile, digestSmallFile } from './digest-threads.js';

/**
 * Written bytes are handed to the threads this many at a time (the rest at the end): one message,
 * reply, open and close per 4 MiB and thread instead of per batch written (4,096 per GiB of
 * 256 KiB batches).
 */
const HASH_STEP = 4 * 1024 * 1024;

export class WrittenBytesDigest {
  /** Still small: nothing is hashed before the whole body is written. */
  private small = true;
  /** A small body's digests, asked for once all of it was written (`allWritten`), and its size. */
  private smallDigests: { size: number; digests: Promise<BlobDigests> } | null = null;
  /** Both digests in the digest threads, once the body is large. */
  private threads: ThreadDigests | null = null;
  /** Bytes of the body handed to the threads so far (from its first, at `base` in the file). */
  private sent = 0;
  /** The file holds the body up to here (bytes of the body, the writer said so). */
  private writtenEnd = 0;
  /** Every hash request sent, settled or not; rejects if one failed. */
  private hashing: Promise<unknown> = Promise.resolve();

  /** A small body's digests on this thread, from its chunks (see above); null when the threads compute them. */
  private inline: DigestStream | null;

  /**
   * `bodyAtMost`: no more bytes than this can come (the caller refuses more). `base`: the file
   * offset of the body's first byte.
   */
  constructor(
    private readonly file: string,
    bodyAtMost: number,
    private readonly base = 0,
  ) {
    this.inline = bodyAtMost <= SMALL_BODY_BYTES && onOneCpu() ? new DigestStream() : null;
  }

  /** A chunk accepted for writing; `size` is the body's byte count with it. */
  received(chunk: Buffer, size: number): void {
    if (this.inline) return this.inline.update(chunk);
    if (!this.small || size <= SMALL_BODY_BYTES) return;
    this.small = false;
    this.threads = new ThreadDigests();
  }

  /** The file holds the body's bytes up to the file offset `end`: the threads may hash them. */
  written(end: number): void {
    this.writtenEnd = Math.max(this.writtenEnd, end - this.base);
    if (this.threads === null || this.writtenEnd - this.sent < HASH_STEP) return;
    this.send(this.writtenEnd);
  }

  /** Every byte of the body (`size` of them) is written, not yet synced: a small body's digests may start. */
  allWritten(size: number): void {
    if (!this.small || this.inline) return;
    const digests = digestSmallFile(this.file, size, this.base);
    // Awaited in digest(); until then a failure must not count as an unhandled rejection.
    digests.catch(() => undefined);
    this.smallDigests = { size, digests };
  }

  private send(end: number): void {
    if (this.threads === null || end <= this.sent) return;
    const request = this.threads.hash(this.file, this.base + this.sent, end - this.sent);
    this.sent = end;
    this.hashing = Promise.all([this.hashing, request]);
    // Awaited in digest(); until then a failure must not count as an unhandled rejection.
    this.hashing.catch(() => undefined);
  }

  /** The digests of the whole body (`size` bytes, all written and synced). */
  async digest(size: number): Promise<BlobDigests> {
    if (this.inline) return this.inline.digest();
    if (this.small) return this.digestSmall(size);
    const threads = this.threads as ThreadDigests;
    try {
      // The bytes written since the last step.
      this.send(this.writtenEnd);
      this.threads = null;
      if (this.sent !== size) throw new Error(`digest threads were sent ${this.sent} of ${size} bytes`);
      await this.hashing;
      return await threads.finish();
    } catch {
      threads.forget();
      return this.readAgain(size);
    }
  }

  private async digestSmall(size: number): Promise<BlobDigests> {
    const asked = this.smallDigests;
    this.smallDigests = null;
    try {
      // Asked for when the last byte was written, normally; if not (or for another size), now.
      return await (asked?.size === size ? asked.digests : digestSmallFile(this.file, size, this.base));
    } catch {
      return this.readAgain(size);
    }
  }

  private async readAgain(size: number): Promise<BlobDigests> {
    const whole = await digestLocalFile(this.file, size, this.base);
    return { md5: whole.md5, sha256: whole.sha256 };
  }

  /** The write failed: the threads forget the digests. */
  abandon(): void {
    this.inline = null;
    this.threads?.forget();
    this.threads = null;
    this.smallDigests = null;
  }
}

/**
 * Whether this process may run on one CPU only. Asked per body (one sched_getaffinity call): an
 * operator may move a running node onto more CPUs, or fewer (`taskset -a -p`).
 */
function onOneCpu(): boolean {
  return os.availableParallelism() === 1;
}
