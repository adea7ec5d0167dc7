/**
 * Runs claimed jobs with registered handlers. One worker per process; it polls the queue, runs up
 * to `concurrency` jobs at once, retries failures with backoff and stops cleanly on shutdown.
 */
import os from 'node:os';
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import { backoffMs, type ClaimedJob, type JobQueue } from './queue.js';

export interface JobHandler {
  /** Does the work. Throwing schedules a retry; it must be safe to run twice (at-least-once). */
  run(payload: unknown, job: ClaimedJob): Promise<void>;
  /** Lease length: longer than the job can take. */
  leaseMs?: number;
  /** Backoff for the next attempt; defaults to exponential with jitter. */
  retryInMs?(attempt: number): number;
}

export class Worker {
  readonly id = `${os.hostname()}:${process.pid}:${crypto.randomBytes(3).toString('hex')}`;
  private readonly handlers = new Map<string, JobHandler>();
  private timer: NodeJS.Timeout | null = null;
  private running = 0;
  private stopping = false;
  private idle: Promise<void> = Promise.resolve();

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
    this.schedule(0);
  }

  /** Asks for an immediate poll (after enqueueing work this process could run now). */
  poke(): void {
    if (!this.stopping && this.timer) {
      clearTimeout(this.timer);
      this.schedule(0);
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    await this.idle;
    await this.queue.releaseLeases(this.id).catch(() => undefined);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.idle = this.tick().finally(() => {
        if (!this.stopping) this.schedule(this.pollMs);
      });
    }, ms);
  }

  private async tick(): Promise<void> {
    const free = this.concurrency - this.running;
    if (free <= 0) return;
    const byLease = new Map<number, string[]>();
    for (const [kind, h] of this.handlers) {
      const lease = h.leaseMs ?? 60_000;
      byLease.set(lease, [...(byLease.get(lease) ?? []), kind]);
    }
    const all: Promise<void>[] = [];
    for (const [lease, kinds] of byLease) {
      let jobs: ClaimedJob[];
      try {
        jobs = await this.queue.claim(this.id, kinds, free, lease);
      } catch (err) {
        this.log.error({ err }, 'job claim failed');
        return;
      }
      for (const job of jobs) all.push(this.runOne(job));
    }
    await Promise.all(all);
  }

  private async runOne(job: ClaimedJob): Promise<void> {
    const handler = this.handlers.get(job.kind);
    if (!handler) return;
    this.running++;
    try {
      await handler.run(job.payload, job);
      await this.queue.complete(job.id);
    } catch (err) {
      const delay = handler.retryInMs ? handler.retryInMs(job.attempt) : backoffMs(job.attempt);
      const message = err instanceof Error ? err.message : String(err);
      const outcome = await this.queue.fail(job, message, delay).catch(() => 'unknown');
      this.log.warn({ job: job.id, kind: job.kind, attempt: job.attempt, outcome, err: message }, 'job failed');
    } finally {
      this.running--;
    }
  }
}
