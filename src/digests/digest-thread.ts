/**
 * The main thread's side of one digest thread (digest-worker.ts): a worker thread, started on first
 * use, that computes digests (MD5, SHA-256, or both from one read) from byte ranges of local files
 * or from shared memory. A node has two (digest-threads.ts): a large direct or S3 body's MD5 goes
 * to one and its SHA-256 to the other, computed at once, neither on the main thread, the one
 * receiving the bytes. Each thread serves every upload of the node: their ranges queue there, in
 * the order sent, so hashing never takes more than two extra cores however many uploads run.
 *
 * If the thread dies (it should not: it only reads and hashes), every pending request rejects and
 * the next request starts a new thread; callers treat a rejection as "no digest" and read the
 * file again. An idle thread holding no digest stops after IDLE_MS: a worker thread costs about
 * 10 MB of resident memory, which an idle node need not keep.
 */
import { Worker } from 'node:worker_threads';
import type { DigestAlgorithm } from './digest.js';
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
  return new URL(here.href.replace(/\/src\/digests\/digest-worker\.js$/, '/dist/digests/digest-worker.js'));
}

export class DigestThread {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  /**
   * The thread each digest's state lives in. A digest whose thread died must never continue in a
   * new one (it would hash only the ranges sent after: a wrong digest), so its later calls reject.
   */
  private readonly livesIn = new Map<number, Worker>();
  /** What each digest computes (newDigest); forgotten with the digest. */
  private readonly algorithmsOf = new Map<number, readonly DigestAlgorithm[]>();
  private nextId = 1;
  private nextDigest = 1;
  private idleTimer: NodeJS.Timeout | null = null;
  /**
   * When the last request was sent. The idle timer checks it when it fires rather than being
   * cleared and set again by every request: small bodies send one each, hundreds a second.
   */
  private lastRequestMs = 0;

  /**
   * A fresh name for one digest's state in the thread, computing `algorithms` from the same bytes
   * (one read for all of them).
   */
  newDigest(algorithms: readonly DigestAlgorithm[]): number {
    const digest = this.nextDigest++;
    this.algorithmsOf.set(digest, algorithms);
    return digest;
  }

  /** Adds `length` bytes of `file` from `start` to `digest` (after the ranges sent before). */
  async hash(digest: number, file: string, start: number, length: number): Promise<void> {
    const algorithms = this.algorithms(digest);
    await this.call(digest, (id) => ({ op: 'hash', id, digest, algorithms, file, start, length }));
  }

  /**
   * Adds `bytes` to `digest` (after what was sent before). They must be a view of shared memory
   * (a SharedArrayBuffer, not copied on the way), left unchanged until this resolves.
   */
  async hashBytes(digest: number, bytes: Uint8Array): Promise<void> {
    const algorithms = this.algorithms(digest);
    await this.call(digest, (id) => ({ op: 'hashBytes', id, digest, algorithms, bytes }));
  }

  /**
   * The lowercase hex digests of everything added to `digest`, in the order of its algorithms;
   * the thread forgets it.
   */
  async finish(digest: number): Promise<string[]> {
    const algorithms = this.algorithms(digest);
    const reply = await this.call(digest, (id) => ({ op: 'finish', id, digest, algorithms })).catch((err: unknown) => {
      this.forget(digest);
      throw err;
    });
    this.livesIn.delete(digest);
    this.algorithmsOf.delete(digest);
    this.stopWhenIdle();
    if (reply.hex?.length !== algorithms.length) throw new Error('digest thread answered without the digests');
    return reply.hex;
  }

  /**
   * The lowercase hex digests of `length` bytes of `file` from `start`, in the order of
   * `algorithms`, in one request and one read: a small body's, with no state left in the thread.
   */
  async digestFile(file: string, start: number, length: number, algorithms: readonly DigestAlgorithm[]): Promise<string[]> {
    const reply = await this.request((id) => ({ op: 'digestFile', id, algorithms, file, start, length }));
    if (reply.hex?.length !== algorithms.length) throw new Error('digest thread answered without the digests');
    return reply.hex;
  }

  private algorithms(digest: number): readonly DigestAlgorithm[] {
    const algorithms = this.algorithmsOf.get(digest);
    if (!algorithms) throw new Error('unknown or forgotten digest');
    return algorithms;
  }

  /** Drops `digest` without reading it (an upload completed elsewhere, expired or spoiled). */
  forget(digest: number): void {
    this.livesIn.delete(digest);
    this.algorithmsOf.delete(digest);
    this.worker?.postMessage({ op: 'forget', digest } satisfies DigestRequest);
    this.stopWhenIdle();
  }

  /** A request about `digest`, whose state must live in the thread that runs now. */
  private call(digest: number, request: (id: number) => DigestRequest): Promise<DigestReply & { ok: true }> {
    const worker = this.started();
    const home = this.livesIn.get(digest);
    if (home && home !== worker) return Promise.reject(new Error('the digest thread restarted: this digest is lost'));
    this.livesIn.set(digest, worker);
    return this.request(request);
  }

  private request(request: (id: number) => DigestRequest): Promise<DigestReply & { ok: true }> {
    const id = this.nextId++;
    const worker = this.started();
    this.lastRequestMs = Date.now();
    // A command whose only work is waiting for this answer (a CLI on SQLite) must not exit first.
    if (this.pending.size === 0) worker.ref();
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
    worker.on('message', (reply: DigestReply) => this.settle(reply));
    worker.on('error', (err) => this.fail(worker, err));
    worker.on('exit', (code) => this.fail(worker, new Error(`digest thread exited with code ${code}`)));
    // Holds the process only while a request waits for its answer (request() and settle()): a
    // stopping node or a finished CLI command does not wait for the idle timer. After the
    // listeners: a 'message' listener added later refs the thread's port again.
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private settle(reply: DigestReply): void {
    const p = this.pending.get(reply.id);
    if (!p) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker?.unref();
    if (reply.ok) p.resolve(reply);
    else p.reject(new Error(reply.message));
    this.stopWhenIdle();
  }

  /** Stops the thread IDLE_MS after its last request when it holds no digest and has no work. */
  private stopWhenIdle(): void {
    if (!this.worker || this.pending.size > 0 || this.livesIn.size > 0 || this.idleTimer) return;
    this.armIdleTimer(IDLE_MS);
  }

  private armIdleTimer(ms: number): void {
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      const worker = this.worker;
      if (!worker || this.pending.size > 0 || this.livesIn.size > 0) return;
      // Used since the timer was set: wait out the rest of that request's idle time.
      const idleFor = Date.now() - this.lastRequestMs;
      if (idleFor < IDLE_MS) return this.armIdleTimer(IDLE_MS - idleFor);
      // Forgotten first: its exit is then no failure, and the next request starts another.
      this.worker = null;
      void worker.terminate();
    }, ms);
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
