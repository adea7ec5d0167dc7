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
  /** The part's size and digests, once `stream` has ended. */
  result(): Promise<PutResult>;
  /** The bytes did not land: the digest threads forget them. */
  abandon(): void;
}

/** `maxBytes`: the part's declared length, which it may not exceed. */
export function hashedPart(source: Readable, maxBytes: number, onTooLarge: () => Error): HashedPart {
  const digest = new StreamedDigest(maxBytes);
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > maxBytes) return done(onTooLarge());
      // Passed on once the digest threads have room for it (a promise then; it never rejects).
      const room = digest.update(chunk);
      if (room) void room.then(() => done(null, chunk));
      else done(null, chunk);
    },
  });
  source.once('error', (err) => meter.destroy(err));
  source.pipe(meter);
  return {
    stream: meter,
    async result() {
      return { size, ...(await digest.digest()) };
    },
    abandon() {
      digest.abandon();
    },
  };
}
