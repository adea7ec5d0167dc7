/**
 * A part's bytes on their way to the bucket's multipart upload (object storage): counted, so a
 * body longer than allowed is refused as it arrives, and hashed as they pass (MD5 for the part's
 * ETag, SHA-256 for a signed payload's check), in the digest threads when the part is large
 * (streamed-digest.ts), so nothing reads the part back. (A part written into its slot on disk is
 * hashed from the written bytes instead, slots.ts.)
 */
import { Transform, type Readable } from 'node:stream';
import type { PutResult } from '../../blobs/store.js';
import { StreamedDigest } from '../../digests/streamed-digest.js';

export interface HashedPart {
  /** The bytes, to be consumed once. */
  stream: Readable;
  /**
   * The part's size and digests, once `stream` has ended; rejects with the source's own error
   * when its last checks failed (a checksum trailer or header, the declared length): the store may
   * have taken every byte by then, but the part is not the one the client signed.
   */
  result(): Promise<PutResult>;
  /** Why the source failed (the cause to answer, rather than the consumer's broken stream), if it did. */
  failure(): Error | null;
  /**
   * Aborted when the source fails. The failed stream ends without its last bytes, so a consumer
   * that sent a length first (an UploadPart request to the bucket) would wait for them for ever.
   */
  signal: AbortSignal;
  /** The bytes did not land: the digest threads forget them. */
  abandon(): void;
}

/** `maxBytes`: the part's declared length, which it may not exceed. */
export function hashedPart(source: Readable, maxBytes: number, onTooLarge: () => Error): HashedPart {
  const digest = new StreamedDigest(maxBytes);
  let size = 0;
  let settle: (err: Error | null) => void = () => undefined;
  const ended = new Promise<Error | null>((resolve) => (settle = resolve));
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > maxBytes) return done(onTooLarge());
      // Passed on once the digest threads have room for it (a promise then; it never rejects).
      const room = digest.update(chunk);
      if (room) void room.then(() => done(null, chunk));
      else done(null, chunk);
    },
    flush(done) {
      settle(null);
      done();
    },
  });
  // A source failing at its end (a wrong checksum) may do so after the consumer took every byte
  // and stopped listening: the meter's error must not go unhandled (it would stop the process).
  meter.on('error', () => undefined);
  const failing = new AbortController();
  source.once('error', (err) => {
    settle(err);
    meter.destroy(err);
    failing.abort(err);
  });
  source.pipe(meter);
  return {
    stream: meter,
    async result() {
      const err = await ended;
      if (err) throw err;
      return { size, ...(await digest.digest()) };
    },
    failure: () => (failing.signal.aborted ? (failing.signal.reason as Error) : null),
    signal: failing.signal,
    abandon() {
      digest.abandon();
    },
  };
}
