/**
 * MD5 and SHA-256 of a body that passes through memory and is never written to a local file: an
 * upload streamed to S3 (blobs/s3-store.ts) or a stored object read once for its digests (digestStored).
 * A small body is hashed on the main thread as its chunks pass (a file's is hashed in a thread once
 * written, written-digest.ts, but here there is no file to read back). Past SMALL_BODY_BYTES the
 * body is large: its chunks are copied into slabs of shared memory
 * (SharedArrayBuffer, about 0.05 s of copying per GiB) and each full slab goes to both digest
 * threads (digest-threads.ts), MD5 in one and SHA-256 in the other, so the main thread hashes
 * nothing (on a CPU without SHA-NI both digests cost it 4.7 s per GiB). There is no file to read
 * back, so the chunks of the first SMALL_BODY_BYTES are kept (referenced, not copied) until the
 * body is known to be small or large; a large body's threads then get them first. A body declared
 * large (an S3 part's Content-Length) goes to the threads from its first byte: hashed inline first,
 * its first SMALL_BODY_BYTES would be hashed twice.
 *
 * Memory stays flat whatever the size: SLABS slabs per large body, reused; when every slab is with
 * the threads, `update` answers a promise and the caller waits (backpressure), so a slow thread
 * slows the upload instead of growing memory. If a thread fails, the body's digests are lost:
 * `digest` rejects and the caller hashes the stored bytes again from the start, never answering
 * with a digest of part of them.
 */
import type { Readable } from 'node:stream';
import { DigestStream, SMALL_BODY_BYTES, type BlobDigests } from './digest.js';
import { ThreadDigests } from './digest-threads.js';

/** Bytes handed to the threads at once: a message and a reply per MiB and thread. */
const SLAB_BYTES = 1024 * 1024;
/** Slabs per large body: one being filled while the threads hash the others. */
const SLABS = 4;

/** A digest thread failed: the body's digests are lost (hash its bytes again). */
export class DigestThreadFailed extends Error {
  constructor() {
    super('a digest thread failed: the digests of this body are lost');
  }
}

export class StreamedDigest {
  /** Both digests on the main thread while the body is small; null once it is large. */
  private inline: DigestStream | null;
  /** The chunks hashed inline, kept while the body may still turn out large. */
  private held: Buffer[] = [];
  private size = 0;
  /** Both digests in the digest threads, once the body is large. */
  private threads: ThreadDigests | null = null;
  /** Slabs no thread is reading, and how many exist. */
  private readonly free: Uint8Array[] = [];
  private slabs = 0;
  /** The slab being filled, and how much of it is. */
  private slab: Uint8Array | null = null;
  private filled = 0;
  /** Resolves the caller waiting for a slab to come back from the threads. */
  private slabReturned: (() => void) | null = null;
  /** A thread failed: the digests are lost, the bytes are no longer sent. */
  private failed = false;
  /** Every slab sent, settled or not (never rejects: a failure sets `failed`). */
  private hashing: Promise<unknown> = Promise.resolve();

  /** `declaredBytes`: the body's length when the sender declared it (NaN: unknown). */
  constructor(declaredBytes = Number.NaN) {
    const large = declaredBytes > SMALL_BODY_BYTES;
    this.inline = large ? null : new DigestStream();
    this.threads = large ? new ThreadDigests() : null;
  }

  /**
   * Adds the next chunk. Null when it was taken at once; a promise when every slab is with the
   * threads: the caller must wait for it before the next chunk (the chunk is taken by then).
   */
  update(chunk: Buffer): Promise<void> | null {
    this.size += chunk.length;
    if (this.inline) {
      if (this.size <= SMALL_BODY_BYTES) {
        this.inline.update(chunk);
        this.held.push(chunk);
        return null;
      }
      this.inline = null;
      this.threads = new ThreadDigests();
      const first = [...this.held, chunk];
      this.held = [];
      return this.copyAll(first);
    }
    return this.copy(chunk);
  }

  /** The digests of everything added. Rejects if a thread failed (then hash the bytes again). */
  async digest(): Promise<BlobDigests> {
    if (this.inline) return this.inline.digest();
    const threads = this.threads as ThreadDigests;
    this.threads = null;
    if (this.slab && this.filled > 0 && !this.failed) this.send(threads);
    await this.hashing;
    if (this.failed) {
      threads.forget();
      throw new DigestThreadFailed();
    }
    return threads.finish();
  }

  /** The body failed: the threads forget the digests. */
  abandon(): void {
    this.threads?.forget();
    this.threads = null;
    this.held = [];
  }

  /** Copies `chunks` into slabs in order, waiting for a slab when none is free. */
  private copyAll(chunks: Buffer[]): Promise<void> | null {
    for (let i = 0; i < chunks.length; i++) {
      const wait = this.copy(chunks[i] as Buffer);
      if (wait) return wait.then(() => this.copyAll(chunks.slice(i + 1)) ?? undefined);
    }
    return null;
  }

  /** Copies `bytes` into slabs, sending each one filled; waits for a slab when none is free. */
  private copy(bytes: Buffer): Promise<void> | null {
    let at = 0;
    while (at < bytes.length) {
      if (this.failed || this.threads === null) return null;
      if (!this.slab) {
        const slab = this.takeSlab();
        if (!slab) {
          const rest = bytes.subarray(at);
          return new Promise<void>((resolve) => (this.slabReturned = resolve)).then(() => this.copy(rest) ?? undefined);
        }
        this.slab = slab;
        this.filled = 0;
      }
      const n = Math.min(bytes.length - at, SLAB_BYTES - this.filled);
      this.slab.set(bytes.subarray(at, at + n), this.filled);
      this.filled += n;
      at += n;
      if (this.filled === SLAB_BYTES) this.send(this.threads);
    }
    return null;
  }

  private takeSlab(): Uint8Array | null {
    const spare = this.free.pop();
    if (spare) return spare;
    if (this.slabs >= SLABS) return null;
    this.slabs++;
    return new Uint8Array(new SharedArrayBuffer(SLAB_BYTES));
  }

  /** Hands the filled part of the current slab to both threads; it comes back when both are done. */
  private send(threads: ThreadDigests): void {
    const slab = this.slab as Uint8Array;
    const sent = threads.hashBytes(slab.subarray(0, this.filled)).then(
      () => undefined,
      () => {
        this.failed = true;
      },
    );
    this.slab = null;
    this.filled = 0;
    this.hashing = Promise.all([this.hashing, sent]);
    void sent.then(() => {
      this.free.push(slab);
      const wake = this.slabReturned;
      this.slabReturned = null;
      wake?.();
    });
  }
}

/** What digestStored reads a stored blob through: the blob store's `get` (src/blobs/store.ts). */
export interface StoredBlobs {
  get(key: string): Promise<Readable>;
}

/**
 * Size and digests of a blob already in the store, read once: for bytes that arrived without
 * passing through a node (S3 multipart parts) or that a dead process wrote. Hashed in the digest
 * threads as it streams in; if a thread fails, read again and hashed on the main thread (the
 * threads may be failing for good).
 */
export async function digestStored(blobs: StoredBlobs, key: string): Promise<BlobDigests & { size: number }> {
  try {
    return await readDigests(blobs, key, new StreamedDigest());
  } catch (err) {
    if (!(err instanceof DigestThreadFailed)) throw err;
    return readDigests(blobs, key, new DigestStream());
  }
}

async function readDigests(blobs: StoredBlobs, key: string, into: StreamedDigest | DigestStream): Promise<BlobDigests & { size: number }> {
  let size = 0;
  try {
    for await (const chunk of await blobs.get(key)) {
      size += (chunk as Buffer).length;
      const wait = into.update(chunk as Buffer);
      if (wait) await wait;
    }
  } catch (err) {
    if (into instanceof StreamedDigest) into.abandon();
    throw err;
  }
  return { size, ...(await into.digest()) };
}
