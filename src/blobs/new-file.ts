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
import { finished, type Readable, type Transform, type Writable } from 'node:stream';
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
    await (streams.length === 1 ? pipeInto(streams[0], sink) : pipeline([...streams, sink]));
  } catch (err) {
    await removeOnceClosed(sink, file);
    throw err;
  }
}

/**
 * `pipeline([source, sink])` for the common case of one source (every direct upload's body), without
 * what each pipeline builds to end itself: an AbortController, aborted at the end, whose reason is
 * a DOMException with a captured stack trace (about 3 % of the main thread's samples in the small
 * uploads' two-core bench). The same contract: it resolves once the sink has finished and closed
 * (its file synced and its descriptor closed); when either stream fails or closes early, both are
 * destroyed with that error and it rejects with it.
 */
export function pipeInto(source: Readable, sink: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    let failed = false;
    const fail = (err: Error): void => {
      if (failed) return;
      failed = true;
      source.unpipe(sink);
      source.destroy(err);
      sink.destroy(err);
      reject(err);
    };
    // finished() keeps an 'error' listener on each stream: the destroys above never throw unhandled.
    finished(source, { writable: false }, (err) => err && fail(err));
    finished(sink, { readable: false }, (err) => (err ? fail(err) : resolve()));
    source.pipe(sink);
  });
}

async function removeOnceClosed(sink: Writable, file: string): Promise<void> {
  if (!sink.closed) {
    // pipeline has destroyed it: 'close' comes once a pending open has finished and its fd is closed.
    await new Promise<void>((resolve) => sink.once('close', () => resolve()));
  }
  await fsp.rm(file, { force: true });
}
