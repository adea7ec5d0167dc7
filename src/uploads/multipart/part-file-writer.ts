/**
 * Writes one part's body at its offset in the upload's data file, in batches, and syncs it before
 * it finishes. A socket hands the body over in chunks of 64 KiB or less; fs.WriteStream writes each
 * one as its own request to libuv's thread pool (16,000 round trips per GiB, each a wake-up of a
 * pool thread and a callback on the main thread, the largest item of the part PUT's profile). Here
 * chunks are gathered up to BATCH_BYTES and written with one `writev`: the same bytes, no copy.
 * Counting the bytes here also refuses a body longer than the part (`onTooLarge`) before writing it.
 */
import fs from 'node:fs';
import { Writable } from 'node:stream';

/** Bytes gathered before one write: 256 KiB, four socket chunks; at most this much is held per part. */
const BATCH_BYTES = 256 * 1024;
/** A slow sender's many small chunks: a batch stays well under IOV_MAX (1024) buffers. */
const BATCH_CHUNKS = 256;

export class PartFileWriter extends Writable {
  private fd: number | null = null;
  private batch: Buffer[] = [];
  private batchBytes = 0;
  /** Where the next batch goes in the file. */
  private position: number;
  /** Bytes received so far. */
  size = 0;

  constructor(
    private readonly file: string,
    start: number,
    private readonly maxBytes: number,
    private readonly onTooLarge: () => Error,
  ) {
    super({ highWaterMark: BATCH_BYTES });
    this.position = start;
  }

  override _construct(done: (err?: Error | null) => void): void {
    fs.open(this.file, 'r+', (err, fd) => {
      this.fd = fd;
      done(err);
    });
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.size += chunk.length;
    if (this.size > this.maxBytes) return done(this.onTooLarge());
    this.batch.push(chunk);
    this.batchBytes += chunk.length;
    if (this.batchBytes < BATCH_BYTES && this.batch.length < BATCH_CHUNKS) return done();
    this.flushBatch(done);
  }

  /** The rest, then fdatasync: the part is on disk before its marker says it is there. */
  override _final(done: (err?: Error | null) => void): void {
    this.flushBatch((err) => {
      if (err) return done(err);
      fs.fdatasync(this.fd as number, done);
    });
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    if (this.fd === null) return done(err);
    fs.close(this.fd, (closeErr) => done(err ?? closeErr));
    this.fd = null;
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
    fs.writev(this.fd as number, chunks, this.position, (err, written) => {
      if (err) return done(err);
      this.position += written;
      if (written === bytes) return done();
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
