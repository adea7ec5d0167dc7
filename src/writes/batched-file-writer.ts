/**
 * Writes a body into a file from an offset, in batches, and syncs it before it finishes: a
 * multipart part at its offset in the upload's data file, or a new blob's temp file (blobs/fs-store.ts).
 * A socket hands the body over in chunks of 64 KiB or less; fs.WriteStream writes each one as its
 * own request to libuv's thread pool (16,000 round trips per GiB, each a wake-up of a pool thread
 * and a callback on the main thread, the largest item of the part PUT's profile). Here chunks are
 * gathered up to BATCH_BYTES and written with one write. Counting the bytes here also refuses a
 * body longer than allowed (`onTooLarge`) before writing it.
 *
 * The chunks are copied into a batch buffer reused from write to write (and from writer to writer),
 * not held until written: node:http gives each body chunk a malloc'd buffer of its own, freed only
 * when V8 collects it, and a chunk held across two collections (gathering, then a write on the
 * thread pool) moved to the old generation, where only a full collection frees it. Held chunks
 * made the dead ones pile up by tens of MiB, which the malloc arena kept as resident memory
 * (docs/performance.md, "What the design relies on"). Copied, a chunk dies as soon as it is
 * accepted; the copy costs about 0.05 s of CPU per GiB. A body of one chunk is written as it is,
 * and a chunk too big for the batch's room goes with it by reference.
 */
import fs from 'node:fs';
import { Writable } from 'node:stream';
import { chunksWritten } from './spent-chunks.js';

/** Bytes gathered before one write: 256 KiB, four socket chunks; at most this much is held per part. */
const BATCH_BYTES = 256 * 1024;
/** Batch buffers kept for the next writers (2 MiB): more are allocated when more bodies arrive at once. */
const SPARE_BUFFERS = 8;
const spareBuffers: Buffer[] = [];

function takeBatchBuffer(): Buffer {
  // Its own memory, not a slice of Node's shared pool: kept for good (no garbage) and reused.
  return spareBuffers.pop() ?? Buffer.allocUnsafeSlow(BATCH_BYTES);
}

function giveBatchBuffer(buf: Buffer): void {
  if (spareBuffers.length < SPARE_BUFFERS) spareBuffers.push(buf);
}
/**
 * A batch that has not grown for this long (a sender that paused, or went slow) is written anyway:
 * a stalled connection's bytes go to disk instead of staying in memory, up to 256 KiB each.
 */
const STALL_MS = 20;

interface Common {
  /** Offset of the first byte. */
  start: number;
  maxBytes: number;
  onTooLarge: () => Error;
  /** Each chunk as it is accepted (before it is written), with the byte count so far. */
  onChunk?: (chunk: Buffer, size: number) => void;
  /** The file holds everything up to `end` (an offset): called after each batch is written. */
  onWritten?: (end: number) => void;
  /** Every byte of the body (`size` of them) is written, and the sync begins: work on the written bytes may overlap it. */
  onAllWritten?: (size: number) => void;
}

/**
 * flags 'r+': into an existing file (a part at its offset); 'wx': a new file that must not exist;
 * or `fd`: a file the caller opened for writing (closed here when the stream ends or fails), with
 * flags 'r+' when its data alone needs syncing (its entry and size are made durable otherwise).
 */
export type BatchedFileOptions = Common & ({ flags: 'r+' | 'wx'; fd?: undefined } | { fd: number; flags?: 'r+' });

export class BatchedFileWriter extends Writable {
  private fd: number | null = null;
  /** A batch of one chunk, held as it is (a small body needs no batch buffer). */
  private sole: Buffer | null = null;
  /** The batch buffer, once a second chunk arrived: the batch is its first `batchBytes` bytes. */
  private buffer: Buffer | null = null;
  private batchBytes = 0;
  /** Where the next batch goes in the file. */
  private position: number;
  /** Bytes received so far. */
  size = 0;
  /** The writev in flight (a batch's), if any: the file is closed only after it. */
  private inFlight: Promise<void> | null = null;
  /** A stalled batch's write, started by the timer: the next write or the end waits for it. */
  private stallWrite: Promise<Error | null> | null = null;
  private stallTimer: NodeJS.Timeout | null = null;
  /** `size` when the stall timer was armed: a batch that grew since is not stalled. */
  private sizeWhenArmed = 0;

  constructor(
    private readonly file: string,
    private readonly opts: BatchedFileOptions,
  ) {
    super({ highWaterMark: BATCH_BYTES });
    this.position = opts.start;
  }

  override _construct(done: (err?: Error | null) => void): void {
    if (this.opts.fd !== undefined) {
      this.fd = this.opts.fd;
      return done();
    }
    fs.open(this.file, this.opts.flags, (err, fd) => {
      this.fd = fd;
      done(err);
    });
  }

  override _write(chunk: Buffer, enc: BufferEncoding, done: (err?: Error | null) => void): void {
    if (this.stallWrite) {
      void this.stallWrite.then((err) => (err ? done(err) : this._write(chunk, enc, done)));
      return;
    }
    this.size += chunk.length;
    if (this.size > this.opts.maxBytes) return done(this.opts.onTooLarge());
    this.opts.onChunk?.(chunk, this.size);
    // No room for it: the batch and this chunk in one write.
    if (chunk.length > BATCH_BYTES - this.batchBytes) return this.flushBatch(done, chunk);
    this.gather(chunk);
    if (this.batchBytes < BATCH_BYTES) {
      this.armStallTimer();
      return done();
    }
    this.flushBatch(done);
  }

  /** Adds a chunk that fits to the batch: copied, unless it is the first of an empty batch and there is no batch buffer yet. */
  private gather(chunk: Buffer): void {
    if (this.batchBytes === 0 && this.buffer === null) {
      this.sole = chunk;
      this.batchBytes = chunk.length;
      return;
    }
    this.buffer ??= takeBatchBuffer();
    if (this.sole) {
      this.sole.copy(this.buffer, 0);
      this.sole = null;
    }
    chunk.copy(this.buffer, this.batchBytes);
    this.batchBytes += chunk.length;
  }

  /** The rest, then a sync: the bytes are on disk before anything names them (a part marker, a rename, a row). */
  override _final(done: (err?: Error | null) => void): void {
    if (this.stallWrite) {
      void this.stallWrite.then((err) => (err ? done(err) : this._final(done)));
      return;
    }
    this.flushBatch((err) => {
      if (err) return done(err);
      this.opts.onAllWritten?.(this.size);
      // A part rewrites a file that exists (its data suffices); a new file gets a full fsync, its size and inode with it.
      const sync = this.opts.flags === 'r+' ? fs.fdatasync : fs.fsync;
      sync(this.fd as number, done);
    });
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = null;
    // Never close the descriptor under a writev in flight (its number could be reused meanwhile).
    if (this.inFlight) {
      void this.inFlight.then(() => this._destroy(err, done));
      return;
    }
    if (this.buffer) giveBatchBuffer(this.buffer);
    this.buffer = null;
    this.sole = null;
    if (this.fd === null) return done(err);
    fs.close(this.fd, (closeErr) => done(err ?? closeErr));
    this.fd = null;
  }

  /** Writes the batch if it has not grown for STALL_MS (checked again then while it keeps growing). */
  private armStallTimer(): void {
    if (this.stallTimer) return;
    this.sizeWhenArmed = this.size;
    this.stallTimer = setTimeout(() => {
      this.stallTimer = null;
      // Empty: a full batch was written meanwhile (and no write runs while the batch holds bytes).
      if (this.batchBytes === 0 || this.destroyed) return;
      if (this.size !== this.sizeWhenArmed) return this.armStallTimer();
      this.stallWrite = new Promise((resolve) =>
        this.flushBatch((err) => {
          this.stallWrite = null;
          if (err) this.destroy(err);
          resolve(err ?? null);
        }),
      );
    }, STALL_MS);
    this.stallTimer.unref();
  }

  /**
   * Writes the batch, and `extra` after it (a chunk that did not fit, by reference). The batch
   * buffer is written from in place: nothing refills it before `done` (the stream calls `_write`
   * only after it, and a stalled batch's write is waited for).
   */
  private flushBatch(done: (err?: Error | null) => void, extra?: Buffer): void {
    const chunks: Buffer[] = [];
    if (this.sole) chunks.push(this.sole);
    else if (this.buffer && this.batchBytes > 0) chunks.push(this.buffer.subarray(0, this.batchBytes));
    if (extra) chunks.push(extra);
    const bytes = this.batchBytes + (extra?.length ?? 0);
    this.sole = null;
    this.batchBytes = 0;
    if (bytes === 0) return done();
    this.writeAll(chunks, bytes, done);
  }

  /** writev may write less than asked (a signal, a full disk's last bytes): write the rest. */
  private writeAll(chunks: Buffer[], bytes: number, done: (err?: Error | null) => void): void {
    let landed = (): void => undefined;
    this.inFlight = new Promise((resolve) => (landed = resolve));
    fs.writev(this.fd as number, chunks, this.position, (err, written) => {
      this.inFlight = null;
      landed();
      if (err) return done(err);
      this.position += written;
      if (written === bytes) {
        this.opts.onWritten?.(this.position);
        done();
        // Every chunk gathered is dead now: freed with others' by a scavenge every few MiB (spent-chunks.ts).
        chunksWritten(bytes);
        return;
      }
      if (written === 0) return done(new Error(`no progress writing ${this.file}`));
      this.writeAll(rest(chunks, written), bytes - written, done);
    });
  }
}

/** `chunks` without their first `skip` bytes. */
function rest(chunks: Buffer[], skip: number): Buffer[] {
  const out: Buffer[] = [];
  for (const c of chunks) {
    if (skip >= c.length) {
      skip -= c.length;
      continue;
    }
    out.push(skip > 0 ? c.subarray(skip) : c);
    skip = 0;
  }
  return out;
}
