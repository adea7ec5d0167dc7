/**
 * MD5 and SHA-256 of a body being written into a new file, in order. A small body is hashed on the
 * main thread as its chunks pass (a 64 KiB upload: well under a millisecond, no thread round
 * trip). Once the body passes INLINE_BYTES it is large: the main thread's MD5 is dropped and the
 * digest thread (digest-thread.ts) computes MD5 from the file's first byte, reading back each batch
 * the writer has just written (page cache), while SHA-256 goes on on the main thread as the chunks
 * pass (0.6 s of CPU per GiB, about 35 µs per 64 KiB chunk; no bytes read back for it). MD5 costs
 * 1.5 s per GiB: on the main thread it was the largest item of a 1 GiB direct upload's profile,
 * beside the socket and the writes; both digests in the digest thread (2.1 s per GiB) were a chain
 * that the end of the upload waited on. The few MiB hashed with MD5 inline before the switch are
 * hashed again in the thread: cheaper than keeping their chunks.
 *
 * A thread that fails loses the MD5; `digest` then reads the whole file in a new thread
 * (digestLocalFile), never answering with a digest of part of the bytes.
 */
import crypto from 'node:crypto';
import type { BlobDigests } from './digest.js';
import { digestLocalFile, digestThread } from './digest-thread.js';

/** Bodies up to this size are hashed inline: 4 MiB, about 10 ms of hashing spread over its chunks. */
const INLINE_BYTES = 4 * 1024 * 1024;
/**
 * Written bytes are handed to the thread this many at a time (the rest at the end): one message,
 * reply, open and close per 4 MiB instead of per batch written (4,096 per GiB of 256 KiB batches).
 */
const HASH_STEP = 4 * 1024 * 1024;

export class WrittenBytesDigest {
  private readonly sha256 = crypto.createHash('sha256');
  private inlineMd5: crypto.Hash | null = crypto.createHash('md5');
  /** The MD5's name in the digest thread, once the body is large. */
  private threadMd5: number | null = null;
  /** Bytes of the file handed to the thread so far (from offset 0). */
  private sent = 0;
  /** The file holds the body up to here (the writer said so). */
  private writtenEnd = 0;
  /** Every hash request sent, settled or not; rejects if one failed. */
  private hashing: Promise<unknown> = Promise.resolve();

  constructor(private readonly file: string) {}

  /** A chunk accepted for writing; `size` is the body's byte count with it. */
  received(chunk: Buffer, size: number): void {
    this.sha256.update(chunk);
    if (!this.inlineMd5) return;
    if (size <= INLINE_BYTES) {
      this.inlineMd5.update(chunk);
      return;
    }
    this.inlineMd5 = null;
    this.threadMd5 = digestThread.newDigest('md5');
  }

  /** The file holds the body's bytes up to `end`: the thread may hash them. */
  written(end: number): void {
    this.writtenEnd = Math.max(this.writtenEnd, end);
    if (this.threadMd5 === null || end - this.sent < HASH_STEP) return;
    this.send(end);
  }

  private send(end: number): void {
    if (this.threadMd5 === null || end <= this.sent) return;
    const request = digestThread.hash(this.threadMd5, this.file, this.sent, end - this.sent);
    this.sent = end;
    this.hashing = Promise.all([this.hashing, request]);
    // Awaited in digest(); until then a failure must not count as an unhandled rejection.
    this.hashing.catch(() => undefined);
  }

  /** The digests of the whole body (`size` bytes, all written and synced). */
  async digest(size: number): Promise<BlobDigests> {
    const sha256 = this.sha256.digest('hex');
    if (this.inlineMd5) return { md5: this.inlineMd5.digest('hex'), sha256 };
    const name = this.threadMd5 as number;
    try {
      // The bytes written since the last step.
      this.send(this.writtenEnd);
      this.threadMd5 = null;
      if (this.sent !== size) throw new Error(`digest thread was sent ${this.sent} of ${size} bytes`);
      await this.hashing;
      return { md5: await digestThread.finishMd5(name), sha256 };
    } catch {
      digestThread.forget(name);
      const whole = await digestLocalFile(this.file, size);
      return { md5: whole.md5, sha256: whole.sha256 };
    }
  }

  /** The write failed: the thread forgets the digest. */
  abandon(): void {
    if (this.threadMd5 !== null) digestThread.forget(this.threadMd5);
    this.threadMd5 = null;
  }
}
