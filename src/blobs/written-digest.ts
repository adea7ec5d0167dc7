/**
 * MD5 and SHA-256 of a body being written into a new file, in order. A small body is hashed on the
 * main thread as its chunks pass (a 64 KiB upload: well under a millisecond, no thread round
 * trip). Once the body passes INLINE_BYTES it is large: the main-thread digest is dropped and the
 * digest thread (digest-thread.ts) hashes the file from its first byte, reading back each batch
 * the writer has just written (page cache). Hashing costs about 2 s of one core per GiB; on the
 * main thread it was the largest item of a 1 GiB direct upload's profile, beside the socket and
 * the writes, so on another core the body arrives faster. The few MiB hashed inline before the
 * switch are hashed again in the thread: cheaper than keeping their chunks.
 *
 * A thread that fails loses the digest; `digest` then reads the whole file in a new thread
 * (digestLocalFile), never answering with a digest of part of the bytes.
 */
import { DigestStream, type BlobDigests } from './digest.js';
import { digestLocalFile, digestThread } from './digest-thread.js';

/** Bodies up to this size are hashed inline: 4 MiB, about 10 ms of hashing spread over its chunks. */
const INLINE_BYTES = 4 * 1024 * 1024;

export class WrittenBytesDigest {
  private inline: DigestStream | null = new DigestStream();
  /** The digest's name in the digest thread, once the body is large. */
  private threadDigest: number | null = null;
  /** Bytes of the file handed to the thread so far (from offset 0). */
  private sent = 0;
  /** Every hash request sent, settled or not; rejects if one failed. */
  private hashing: Promise<unknown> = Promise.resolve();

  constructor(private readonly file: string) {}

  /** A chunk accepted for writing; `size` is the body's byte count with it. */
  received(chunk: Buffer, size: number): void {
    if (!this.inline) return;
    if (size <= INLINE_BYTES) {
      this.inline.update(chunk);
      return;
    }
    this.inline = null;
    this.threadDigest = digestThread.newDigest();
  }

  /** The file holds the body's bytes up to `end`: the thread may hash them. */
  written(end: number): void {
    if (this.threadDigest === null || end <= this.sent) return;
    const request = digestThread.hash(this.threadDigest, this.file, this.sent, end - this.sent);
    this.sent = end;
    this.hashing = Promise.all([this.hashing, request]);
    // Awaited in digest(); until then a failure must not count as an unhandled rejection.
    this.hashing.catch(() => undefined);
  }

  /** The digests of the whole body (`size` bytes, all written and synced). */
  async digest(size: number): Promise<BlobDigests> {
    if (this.inline) return this.inline.digest();
    const name = this.threadDigest as number;
    this.threadDigest = null;
    try {
      if (this.sent !== size) throw new Error(`digest thread was sent ${this.sent} of ${size} bytes`);
      await this.hashing;
      return await digestThread.finish(name);
    } catch {
      digestThread.forget(name);
      const whole = await digestLocalFile(this.file, size);
      return { md5: whole.md5, sha256: whole.sha256 };
    }
  }

  /** The write failed: the thread forgets the digest. */
  abandon(): void {
    if (this.threadDigest !== null) digestThread.forget(this.threadDigest);
    this.threadDigest = null;
  }
}
