/**
 * MD5 and SHA-256 of a body being written into a new file, in order. A small body is hashed on the
 * main thread as its chunks pass (a 64 KiB upload: well under a millisecond, no thread round
 * trip). Once the body passes INLINE_DIGEST_BYTES it is large: the inline digests are dropped and the two
 * digest threads (digest-threads.ts) compute MD5 and SHA-256 from the file's first byte, each
 * reading back the batches the writer has just written (page cache), in steps of HASH_STEP.
 * The main thread then hashes nothing: on a CPU without SHA-NI, SHA-256 from the chunks as they
 * passed cost it 2.9 s per GiB, 35 % of its profile, and it was the chain a 1 GiB direct upload
 * waited on (docs/performance.md). The few MiB hashed inline before the switch are hashed again in
 * the threads: cheaper than keeping their chunks.
 *
 * A thread that fails loses its digest; `digest` then reads the whole file again in the threads
 * (digestLocalFile), never answering with a digest of part of the bytes.
 */
import { DigestStream, INLINE_DIGEST_BYTES, type BlobDigests } from './digest.js';
import { ThreadDigests, digestLocalFile } from './digest-threads.js';

/**
 * Written bytes are handed to the threads this many at a time (the rest at the end): one message,
 * reply, open and close per 4 MiB and thread instead of per batch written (4,096 per GiB of
 * 256 KiB batches).
 */
const HASH_STEP = 4 * 1024 * 1024;

export class WrittenBytesDigest {
  /** Both digests on the main thread while the body is small; null once it is large. */
  private inline: DigestStream | null = new DigestStream();
  /** Both digests in the digest threads, once the body is large. */
  private threads: ThreadDigests | null = null;
  /** Bytes of the file handed to the threads so far (from offset 0). */
  private sent = 0;
  /** The file holds the body up to here (the writer said so). */
  private writtenEnd = 0;
  /** Every hash request sent, settled or not; rejects if one failed. */
  private hashing: Promise<unknown> = Promise.resolve();

  constructor(private readonly file: string) {}

  /** A chunk accepted for writing; `size` is the body's byte count with it. */
  received(chunk: Buffer, size: number): void {
    if (!this.inline) return;
    if (size <= INLINE_DIGEST_BYTES) {
      this.inline.update(chunk);
      return;
    }
    this.inline = null;
    this.threads = new ThreadDigests();
  }

  /** The file holds the body's bytes up to `end`: the threads may hash them. */
  written(end: number): void {
    this.writtenEnd = Math.max(this.writtenEnd, end);
    if (this.threads === null || end - this.sent < HASH_STEP) return;
    this.send(end);
  }

  private send(end: number): void {
    if (this.threads === null || end <= this.sent) return;
    const request = this.threads.hash(this.file, this.sent, end - this.sent);
    this.sent = end;
    this.hashing = Promise.all([this.hashing, request]);
    // Awaited in digest(); until then a failure must not count as an unhandled rejection.
    this.hashing.catch(() => undefined);
  }

  /** The digests of the whole body (`size` bytes, all written and synced). */
  async digest(size: number): Promise<BlobDigests> {
    if (this.inline) return this.inline.digest();
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
      const whole = await digestLocalFile(this.file, size);
      return { md5: whole.md5, sha256: whole.sha256 };
    }
  }

  /** The write failed: the threads forget the digests. */
  abandon(): void {
    this.threads?.forget();
    this.threads = null;
  }
}
