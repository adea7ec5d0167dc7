/**
 * The whole-file digests of in-place multipart uploads, computed while the parts arrive: MD5 and
 * SHA-256 need the bytes in order, so once part n is written and parts 1..n-1 are hashed, part n
 * is read back (from the page cache: it was just written) and hashed, then n+1 if it is there.
 * Parts come 4 or so at a time, mostly in order, so by completion the work is done and the file is
 * not read again. The reading and hashing run in the digest threads, MD5 in one and SHA-256 in the
 * other at once, as direct bodies have them (digest-threads.ts), off the thread receiving the
 * parts; this module only decides which range is next. (Both from one read in one thread was a
 * 2.8 s per GiB chain on a CPU with SHA-NI: the completion waited 0.8-1.2 s for it, 0.1-0.25 s
 * split, 28 Nov 2026; without SHA-NI, at load 9-16, the split's second read of every part had not
 * paid: docs/performance.md.)
 *
 * Only what this process saw counts: a part written by another node or before a restart is never
 * in `sizes`, so the digest stalls and `take` answers null (the caller reads the file once). A
 * part rewritten after it was hashed (or while it is) spoils the digest the same way; a part
 * written for the first time never does, whenever it comes.
 */
import type { BlobDigests } from '../../digests/digest.js';
import { ThreadDigests } from '../../digests/digest-threads.js';
import type { PartWrite } from './part-store.js';

interface Running {
  file: string;
  partSize: number;
  /** The next part to hash (from 1). */
  next: number;
  /** The part being read and hashed right now; 0 between parts. */
  hashing: number;
  hashedBytes: number;
  /** This upload's digests in the digest threads. */
  digest: ThreadDigests;
  /** Sizes of parts written here and not hashed yet. */
  sizes: Map<number, number>;
  spoiled: boolean;
  /** The hashing in progress, one part after another. */
  work: Promise<void>;
}

export class RunningDigests {
  private readonly uploads = new Map<string, Running>();

  /**
   * A write of `part` begins. Its first write is announced here too, so only bytes already hashed
   * (a part before `next`) or being hashed now spoil the digest: a part that is merely next, or
   * waits in `sizes` for an earlier one, is forgotten until its write ends (`partWritten`).
   */
  partWriteBegins(uuid: string, part: number): void {
    const r = this.uploads.get(uuid);
    if (!r) return;
    r.sizes.delete(part);
    if (part < r.next || part === r.hashing) r.spoiled = true;
  }

  /** `part` of `size` bytes is durable in `file`: hash whatever is now contiguous. */
  partWritten(file: string, w: PartWrite, size: number): void {
    let r = this.uploads.get(w.uuid);
    if (!r) {
      r = { file, partSize: w.partSize, next: 1, hashing: 0, hashedBytes: 0, digest: new ThreadDigests(), sizes: new Map(), spoiled: false, work: Promise.resolve() };
      this.uploads.set(w.uuid, r);
    }
    if (r.spoiled) return;
    r.sizes.set(w.part, size);
    const running = r;
    r.work = r.work.then(() => this.advance(running)).catch(() => {
      running.spoiled = true;
    });
  }

  /**
   * The digests of all `parts` when this process hashed every one of them and they add up to
   * `size` bytes; null otherwise. Forgets the upload either way.
   */
  async take(uuid: string, parts: number, size: number): Promise<(BlobDigests & { size: number }) | null> {
    const r = this.uploads.get(uuid);
    if (!r) return null;
    await r.work;
    this.uploads.delete(uuid);
    if (r.spoiled || r.next !== parts + 1 || r.hashedBytes !== size) {
      r.digest.forget();
      return null;
    }
    // A thread failing now costs a read of the file (the caller's fallback), never a wrong digest.
    const digests = await r.digest.finish().catch(() => null);
    return digests && { size, ...digests };
  }

  forget(uuid: string): void {
    const r = this.uploads.get(uuid);
    r?.digest.forget();
    this.uploads.delete(uuid);
  }

  private async advance(r: Running): Promise<void> {
    for (;;) {
      const size = r.sizes.get(r.next);
      if (r.spoiled || size === undefined) return;
      r.hashing = r.next;
      try {
        if (size > 0) await r.digest.hash(r.file, (r.next - 1) * r.partSize, size);
      } finally {
        r.hashing = 0;
      }
      // A rewrite that began while this part was read spoiled it (partWriteBegins: part === hashing).
      if (r.spoiled) return;
      r.sizes.delete(r.next);
      r.hashedBytes += size;
      r.next++;
    }
  }
}
