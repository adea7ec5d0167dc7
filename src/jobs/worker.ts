/**
 * Runs claimed jobs with registered handlers. One worker per process; it polls the queue, runs up
 * to `concurrency` jobs at once (a slow job never holds up the others' polling), keeps each
 * running job's lease alive with a heartbeat, retries failures with backoff and stops cleanly on
 * shutdown.
 */
import os from 'node:os';
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import { backoffMs, type ClaimedJob, type JobQueue } from './queue.js';

export interface JobHandler {
  /** Does the work. Throwing schedules a retry; it must be safe to run twice (at-least-once). */
  run(payload: unknown, job: ClaimedJob): Promise<void>;
  /** Lease length. The heartbeat renews it while the job runs, so it bounds only crash recovery. */
  leaseMs?: number;
  /** Backoff for the next attempt; defaults to exponential with jitter. */
  retryInMs?(attempt: number): number;
  /**
   * Most jobs of this kind this process runs at once, so slow work (a receiver that lets every
   * webhook time out) cannot take every slot from the rest. Default: no cap besides the worker's.
   */
  maxConcurrent?: number;
}

/** Thrown by a handler when retrying cannot help: the job is marked dead at once. */
export class JobGiveUpError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JobGiveUpError';
  }
}

const DEFAULT_LEASE_MS = 60_000;

export class Worker {
  readonly id = `${os.hostname()}:${process.pid}:${crypto.randomBytes(3).toString('hex')}`;
  private readonly handlers = new Map<string, JobHandler>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly runningByKind = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  private pollAgain = false;
  private started = false;
  private stopping = false;

  constructor(
    private readonly queue: JobQueue,
    private readonly log: Logger,
    private readonly pollMs: number,
    private readonly concurrency = 4,
  ) {}

  register(kind: string, handler: JobHandler): void {
    this.handlers.set(kind, handler);
  }

  start(): void {
    this.started = true;
    this.schedule(0);
  }

  /** Asks for an immediate poll (after enqueueing work this process could run now). */
  poke(): void {
    if (!this.started || this.stopping) return;
    if (this.polling) {
      this.pollAgain = true; // one poll at a time; run another right after this one
      return;
    }
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.polling;
    await Promise.all([...this.inFlight]);
    await this.queue.releaseLeases(this.id).catch(() => undefined);
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.polling = this.poll().finally(() => {
        this.polling = null;
        if (this.stopping) return;
        const again = this.pollAgain;
        this.pollAgain = false;
        this.schedule(again ? 0 : this.pollMs);
      });
    }, ms);
  }

  private async poll(): Promise<void> {
    let free = this.concurrency - this.inFlight.size;
    if (free <= 0) return;
    // One claim per lease length; a capped kind is claimed on its own, up to its free share.
    const groups = new Map<string, { lease: number; kinds: string[]; cap: number | null }>();
    for (const [kind, h] of this.handlers) {
      const lease = h.leaseMs ?? DEFAULT_LEASE_MS;
      const key = h.maxConcurrent ? `kind:${kind}` : `lease:${lease}`;
      const g = groups.get(key) ?? { lease, kinds: [], cap: h.maxConcurrent ? h.maxConcurrent - (this.runningByKind.get(kind) ?? 0) : null };
      g.kinds.push(kind);
      groups.set(key, g);
    }
    for (const { lease, kinds, cap } of groups.values()) {
      if (free <= 0 || this.stopping) break;
      const limit = cap === null ? free : Math.min(free, cap);
      if (limit <= 0) continue;
      let jobs: ClaimedJob[];
      try {
        jobs = await this.queue.claim(this.id, kinds, limit, lease);
      } catch (err) {
        this.log.error({ err }, 'job claim failed');
        return;
      }
      free -= jobs.length;
      for (const job of jobs) this.track(this.runOne(job, lease));
    }
    // Every slot filled: more may be due, so look again as soon as one frees up.
    if (free <= 0) this.pollAgain = true;
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => {
      this.inFlight.delete(p);
      if (this.pollAgain && !this.polling && !this.stopping) this.poke();
    });
  }

  private async runOne(job: ClaimedJob, leaseMs: number): Promise<void> {
    const handler = this.handlers.get(job.kind);
    if (!handler) return;
    this.runningByKind.set(job.kind, (this.runningByKind.get(job.kind) ?? 0) + 1);
    const heartbeat = setInterval(() => {
      this.queue.extend(job, leaseMs).then(
        (ok) => ok || this.log.warn({ job: job.id, kind: job.kind }, 'job lease lost while running'),
        (err: unknown) => this.log.warn({ err, job: job.id }, 'job lease renewal failed'),
      );
    }, Math.max(50, Math.floor(leaseMs / 3)));
    heartbeat.unref();
    try {
      await handler.run(job.payload, job);
      clearInterval(heartbeat);
      const ok = await this.queue.complete(job);
      if (!ok) this.log.warn({ job: job.id, kind: job.kind }, 'job finished after its lease was lost; outcome not recorded');
    } catch (err) {
      clearInterval(heartbeat);
      const giveUp = err instanceof JobGiveUpError;
      const delay = giveUp ? 0 : handler.retryInMs ? handler.retryInMs(job.attempt) : backoffMs(job.attempt);
      const message = err instanceof Error ? err.message : String(err);
      const outcome = await this.queue.fail(job, message, delay, giveUp).catch(() => 'unknown');
      this.log.warn({ job: job.id, kind: job.kind, attempt: job.attempt, outcome, err: message }, 'job failed');
    } finally {
      clearInterval(heartbeat);
      this.runningByKind.set(job.kind, (this.runningByKind.get(job.kind) ?? 1) - 1);
    }
  }
}
