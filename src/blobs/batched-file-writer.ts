/**
 * Writes a body into a file from an offset, in batches, and syncs it before it finishes: a
 * multipart part at its offset in the upload's data file, or a new blob's temp file (fs-store.ts).
 * A socket hands the body over in chunks of 64 KiB or less; fs.WriteStream writes each one as its
 * own request to libuv's thread pool (16,000 round trips per GiB, each a wake-up of a pool thread
 * and a callback on the main thread, the largest item of the part PUT's profile). Here chunks are
 * gathered up to BATCH_BYTES and written with one `writev`: the same bytes, no copy. Counting the
 * bytes here also refuses a body longer than allowed (`onTooLarge`) before writing it.
 */
import fs from 'node:fs';
import { Writable } from 'node:stream';
import { chunksWritten } from './spent-chunks.js';

/** Bytes gathered before one write: 256 KiB, four socket chunks; at most this much is held per part. */
const BATCH_BYTES = 256 * 1024;
/** A slow sender's many small chunks: a batch stays well under IOV_MAX (1024) buffers. */
const BATCH_CHUNKS = 256;
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
}

/**
 * flags 'r+': into an existing file (a part at its offset); 'wx': a new file that must not exist;
 * or `fd`: a file the caller opened for writing (closed here when the stream ends or fails).
 */
export type BatchedFileOptions = Common & ({ flags: 'r+' | 'wx'; fd?: undefined } | { fd: number; flags?: undefined });

export class BatchedFileWriter extends Writable {
  private fd: number | null = null;
  private batch: Buffer[] = [];
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
    this.batch.push(chunk);
    this.batchBytes += chunk.length;
    if (this.batchBytes < BATCH_BYTES && this.batch.length < BATCH_CHUNKS) {
      this.armStallTimer();
      return done();
    }
    this.flushBatch(done);
  }

  /** The rest, then a sync: the bytes are on disk before anything names them (a part marker, a rename, a row). */
  override _final(done: (err?: Error | null) => void): void {
    if (this.stallWrite) {
      void this.stallWrite.then((err) => (err ? done(err) : this._final(done)));
      return;
    }
    this.flushBatch((err) => {
      if (err) return done(err);
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

  private flushBatch(done: (err?: Error | null) => void): void {
    const chunks = this.batch;
    const bytes = this.batchBytes;
    this.batch = [];
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
        // The batch's chunks are dead now: freed with others' by a scavenge every few MiB (spent-chunks.ts).
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
