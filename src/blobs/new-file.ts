/**
 * Streams bytes into a file that must not outlive a failure: on any error the file is removed and
 * the error passed on. The removal waits for the write stream to let go of the file first. Its
 * open() is asynchronous, so a pipeline failing at once (a source already broken when it starts)
 * used to remove nothing and then let the late open create the file: an empty temp file that no
 * request owned and only the leftovers sweep, hours later, would remove (found by the Upload API
 * fuzzer: two 0-byte `.part` files in one of ten runs).
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import type { Readable, Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface NewFileOptions {
  /** fsync before close (durable bytes before a rename makes them visible). */
  flush?: boolean;
  mode?: number;
  /** The file, already opened for writing (it is closed when the stream ends or fails). */
  fd?: number;
}

export async function streamToNewFile(file: string, source: Readable, through: Transform[], opts: NewFileOptions = {}): Promise<void> {
  const sink = fs.createWriteStream(file, { flush: opts.flush ?? false, ...(opts.mode !== undefined ? { mode: opts.mode } : {}), ...(opts.fd !== undefined ? { fd: opts.fd } : {}) });
  await pipeToNewFile(file, [source, ...through], sink);
}

/** The same for a sink of the caller's that creates `file` (it must emit 'close' once destroyed). */
export async function pipeToNewFile(file: string, streams: [Readable, ...Transform[]], sink: Writable): Promise<void> {
  try {
    await pipeline([...streams, sink]);
  } catch (err) {
    await removeOnceClosed(sink, file);
    throw err;
  }
}

async function removeOnceClosed(sink: Writable, file: string): Promise<void> {
  if (!sink.closed) {
    // pipeline has destroyed it: 'close' comes once a pending open has finished and its fd is closed.
    await new Promise<void>((resolve) => sink.once('close', () => resolve()));
  }
  await fsp.rm(file, { force: true });
}
