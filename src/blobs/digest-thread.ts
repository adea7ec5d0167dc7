/**
 * The main thread's side of the digest thread (digest-worker.ts): one worker thread per process,
 * started on first use, that computes whole-file MD5 + SHA-256 from byte ranges of local files:
 * in-place multipart uploads (src/uploads/multipart/running-digest.ts) and large bodies written
 * to disk, such as a direct upload's (written-digest.ts).
 * MD5 is sequential, so one upload's digest can use one core at most; what this buys is that the
 * core is not the one receiving the parts (hashing on the main thread, it spent 5.2-5.5 s of CPU
 * per GiB while the parts arrived, docs/performance.md). One thread serves every upload of the node: their ranges queue
 * there, in the order sent, and hashing never takes more than one extra core. A large direct body
 * asks it for MD5 alone and hashes SHA-256 on the main thread as its chunks pass (written-digest.ts):
 * MD5 (1.5 s per GiB) is then the whole chain the end of the upload can wait on. Multipart parts
 * arrive out of order, so both digests stay here for them (a main-thread SHA-256 read back from the
 * page cache cost more CPU than it saved: docs/performance.md).
 *
 * If the thread dies (it should not: it only reads and hashes), every pending request rejects and
 * the next request starts a new thread; callers treat a rejection as "no digest" and read the
 * file again. An idle thread holding no digest stops after IDLE_MS: a worker thread costs about
 * 10 MB of resident memory, which an idle node need not keep.
 */
import { Worker } from 'node:worker_threads';
import type { BlobDigests, DigestAlgorithms } from './digest.js';
import type { DigestReply, DigestRequest } from './digest-worker.js';

const IDLE_MS = 30_000;

interface Pending {
  resolve: (reply: DigestReply & { ok: true }) => void;
  reject: (err: Error) => void;
}

/**
 * The compiled worker next to this module. Under vitest this module may run from `src/` as
 * TypeScript, which a worker thread cannot load: it then uses the build in `dist/`.
 */
function workerFile(): URL {
  const here = new URL('./digest-worker.js', import.meta.url);
  if (!import.meta.url.endsWith('.ts')) return here;
  return new URL(here.href.replace(/\/src\/blobs\/digest-worker\.js$/, '/dist/blobs/digest-worker.js'));
}

class DigestThread {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  /**
   * The thread each digest's state lives in. A digest whose thread died must never continue in a
   * new one (it would hash only the ranges sent after: a wrong MD5), so its later calls reject.
   */
  private readonly livesIn = new Map<number, Worker>();
  /** What each digest computes (newDigest); forgotten with the digest. */
  private readonly algorithmsOf = new Map<number, DigestAlgorithms>();
  private nextId = 1;
  private nextDigest = 1;
  private idleTimer: NodeJS.Timeout | null = null;

  /**
   * A fresh name for one digest's state in the thread: both digests, or MD5 alone when the caller
   * computes SHA-256 on the main thread (then `finishMd5`).
   */
  newDigest(algorithms: DigestAlgorithms = 'md5+sha256'): number {
    const digest = this.nextDigest++;
    this.algorithmsOf.set(digest, algorithms);
    return digest;
  }

  /** Adds `length` bytes of `file` from `start` to `digest` (after the ranges sent before). */
  async hash(digest: number, file: string, start: number, length: number): Promise<void> {
    const algorithms = this.algorithms(digest);
    await this.call(digest, (id) => ({ op: 'hash', id, digest, algorithms, file, start, length }));
  }

  /** The digests of everything added to a digest of both; the thread forgets it. */
  async finish(digest: number): Promise<BlobDigests> {
    const reply = await this.finishReply(digest);
    if (reply.md5 === undefined || reply.sha256 === undefined) throw new Error('digest thread answered without digests');
    return { md5: reply.md5, sha256: reply.sha256 };
  }

  /** The MD5 of everything added to an MD5-only digest; the thread forgets it. */
  async finishMd5(digest: number): Promise<string> {
    const reply = await this.finishReply(digest);
    if (reply.md5 === undefined) throw new Error('digest thread answered without an MD5');
    return reply.md5;
  }

  /** Drops `digest` without reading it (an upload completed elsewhere, expired or spoiled). */
  forget(digest: number): void {
    this.livesIn.delete(digest);
    this.algorithmsOf.delete(digest);
    this.worker?.postMessage({ op: 'forget', digest } satisfies DigestRequest);
    this.stopWhenIdle();
  }

  private async finishReply(digest: number): Promise<DigestReply & { ok: true }> {
    const algorithms = this.algorithms(digest);
    const reply = await this.call(digest, (id) => ({ op: 'finish', id, digest, algorithms })).catch((err: unknown) => {
      this.forget(digest);
      throw err;
    });
    this.livesIn.delete(digest);
    this.algorithmsOf.delete(digest);
    this.stopWhenIdle();
    return reply;
  }

  private algorithms(digest: number): DigestAlgorithms {
    return this.algorithmsOf.get(digest) ?? 'md5+sha256';
  }

  private call(digest: number, request: (id: number) => DigestRequest): Promise<DigestReply & { ok: true }> {
    const id = this.nextId++;
    const worker = this.started();
    const home = this.livesIn.get(digest);
    if (home && home !== worker) return Promise.reject(new Error('the digest thread restarted: this digest is lost'));
    this.livesIn.set(digest, worker);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage(request(id));
    });
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(workerFile(), {
      // A few small objects and one 1 MiB read buffer (outside the heap): a tiny heap suffices.
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 2 },
    });
    // Never keeps the process alive: a stopping node does not wait for digests nobody will take.
    worker.unref();
    worker.on('message', (reply: DigestReply) => this.settle(reply));
    worker.on('error', (err) => this.fail(worker, err));
    worker.on('exit', (code) => this.fail(worker, new Error(`digest thread exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }

  private settle(reply: DigestReply): void {
    const p = this.pending.get(reply.id);
    if (!p) return;
    this.pending.delete(reply.id);
    if (reply.ok) p.resolve(reply);
    else p.reject(new Error(reply.message));
    this.stopWhenIdle();
  }

  /** Stops the thread IDLE_MS after its last request when it holds no digest and has no work. */
  private stopWhenIdle(): void {
    if (!this.worker || this.pending.size > 0 || this.livesIn.size > 0 || this.idleTimer) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      const worker = this.worker;
      if (!worker || this.pending.size > 0 || this.livesIn.size > 0) return;
      // Forgotten first: its exit is then no failure, and the next request starts another.
      this.worker = null;
      void worker.terminate();
    }, IDLE_MS);
    this.idleTimer.unref();
  }

  /** The thread is gone: every digest in it is lost; the next request starts another. */
  private fail(worker: Worker, err: Error): void {
    if (this.worker !== worker) return;
    this.worker = null;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}

export const digestThread = new DigestThread();

/** MD5 and SHA-256 of the first `size` bytes of a local file, hashed in the digest thread. */
export async function digestLocalFile(file: string, size: number): Promise<BlobDigests & { size: number }> {
  const digest = digestThread.newDigest();
  try {
    await digestThread.hash(digest, file, 0, size);
  } catch (err) {
    digestThread.forget(digest);
    throw err;
  }
  return { size, ...(await digestThread.finish(digest)) };
}
