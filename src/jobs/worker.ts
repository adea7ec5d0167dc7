/**
 * Runs claimed jobs with registered handlers. One worker per process. It polls the queue when woken
 * (a job enqueued in this process or, on PostgreSQL, announced by NOTIFY from any node; a job of
 * its own finishing) and on a timer as the fallback, and keeps polling at once while polls find
 * work. Jobs run in lanes: a shared pool, and lanes of their own for kinds that ask for one (so a
 * flood of webhook deliveries cannot hold up expiry or byte reclaiming). A running job's lease is
 * kept alive by a fenced heartbeat; failures are retried with backoff; stop() is clean.
 */
import os from 'node:os';
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { JobKind, JobPayloads } from './kinds.js';
import { mergedWrite, type MergedStatement } from '../db/group-commit.js';
import { backoffMs, type ClaimedJob, type ClaimOptions, type ClaimRead, type JobQueue, type OutcomeWrite } from './queue.js';
import { localEnqueues } from './wake.js';

/** Handed to a run: its writes that are committed with the job's outcome, whichever it is. */
export interface JobOutcome {
  /** Commits `write` in the transaction that records the job done, retried or dead. */
  alongside(write: OutcomeWrite): void;
  /**
   * The same for a write of one shape: the outcomes committed together run `statement` once for
   * all their `arg`s (the attempt records of a batch of deliveries: one INSERT, one round trip).
   */
  alongsideMerged<A>(statement: MergedStatement<A, unknown>, arg: A): void;
}

export interface JobHandler<K extends JobKind = JobKind> {
  /**
   * Does the work. Throwing schedules a retry; it must be safe to run twice (at-least-once).
   * Writes given to `outcome.alongside` share the outcome's commit (one commit per job).
   */
  run(payload: JobPayloads[K], job: ClaimedJob<K>, outcome: JobOutcome): Promise<void>;
  /** Lease length. The heartbeat renews it while the job runs, so it bounds only crash recovery. */
  leaseMs?: number;
  /** Backoff for the next attempt; defaults to exponential with jitter. */
  retryInMs?(attempt: number): number;
  /**
   * Slots of this kind's own on this node, instead of a share of the worker's pool: slow work (a
   * receiver that lets every webhook time out) then never takes the other kinds' slots.
   */
  concurrency?: number;
  /**
   * Most jobs of this kind with the same fair key (EnqueueOptions.fairKey) running at once across
   * all nodes. Claims skip saturated keys and take the others in turns.
   */
  perKeyLimit?: number;
  /**
   * A row the run reads first, read by the claim instead (PostgreSQL, with a per-key limit): handed
   * to the run as `job.readRow`. Only for kinds with slots of their own (`concurrency`).
   */
  claimRead?: ClaimRead;
}

/** The typed table a feature returns: each kind with the handler of its payload type. */
export type JobHandlers = { [K in JobKind]?: JobHandler<K> };

/** Thrown by a handler when retrying cannot help: the job is marked dead at once. */
export class JobGiveUpError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JobGiveUpError';
  }
}

/** Thrown by a handler that knows when trying again makes sense (instead of the backoff). */
export class JobRetryLaterError extends Error {
  constructor(
    message: string,
    readonly retryInMs: number,
  ) {
    super(message);
    this.name = 'JobRetryLaterError';
  }
}

const DEFAULT_LEASE_MS = 60_000;

interface Lane {
  slots: number;
  running: number;
}

/** Kinds claimed together: same lane, lease and per-key limit. */
interface ClaimGroup {
  lane: Lane;
  kinds: JobKind[];
  leaseMs: number;
  perKeyLimit: number | undefined;
  read: ClaimRead | undefined;
}

export class Worker {
  readonly id = `${os.hostname()}:${process.pid}:${crypto.randomBytes(3).toString('hex')}`;
  private readonly handlers = new Map<JobKind, JobHandler>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly shared: Lane;
  private groups: ClaimGroup[] | null = null;
  /** Groups that may have due work: claimed at the next poll (every group at a timer poll). */
  private readonly dirty = new Set<ClaimGroup>();
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  private pollAgain = false;
  private started = false;
  private stopping = false;
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly queue: JobQueue,
    private readonly log: Logger,
    private readonly pollMs: number,
    concurrency = 4,
  ) {
    this.shared = { slots: concurrency, running: 0 };
  }

  register<K extends JobKind>(kind: K, handler: JobHandler<K>): void {
    this.handlers.set(kind, handler);
    this.groups = null;
    this.dirty.clear();
  }

  registerAll(handlers: JobHandlers): void {
    for (const kind of Object.keys(handlers) as JobKind[]) {
      const handler = handlers[kind];
      if (handler) this.register(kind, handler);
    }
  }

  start(): void {
    this.started = true;
    this.unsubscribe = localEnqueues.on((kind) => this.poke(kind));
    this.schedule(0, true);
  }

  /**
   * Asks for an immediate poll: work of `kind` (any kind when absent or null) may be due. Only
   * the claim group of that kind is claimed, so a finishing delivery does not query every kind.
   */
  poke(kind?: string | null): void {
    if (!this.started || this.stopping) return;
    const groups = this.claimGroups();
    const group = kind ? groups.find((g) => g.kinds.some((k) => k === kind)) : undefined;
    if (kind && !group) return; // not a kind this node runs
    for (const g of group ? [group] : groups) this.dirty.add(g);
    if (this.polling) {
      this.pollAgain = true; // one poll at a time; run another right after this one
      return;
    }
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.polling;
    await Promise.all([...this.inFlight]);
    await this.queue.releaseLeases(this.id).catch(() => undefined);
  }

  /** `everything`: the fallback poll, which looks at every group whether woken or not. */
  private schedule(ms: number, everything = false): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      if (everything) for (const g of this.claimGroups()) this.dirty.add(g);
      this.polling = this.poll().finally(() => {
        this.polling = null;
        if (this.stopping) return;
        // A group whose claim found work may have more due: look again while its lane has a free
        // slot. With every slot of a lane busy, the next of its jobs to finish pokes.
        const again = this.pollAgain || [...this.dirty].some((g) => g.lane.running < g.lane.slots);
        this.pollAgain = false;
        if (again) this.schedule(0);
        else this.schedule(this.pollMs, true);
      });
    }, ms);
  }

  /** One claim per lane, lease and per-key limit. */
  private claimGroups(): ClaimGroup[] {
    if (this.groups) return this.groups;
    const byKey = new Map<string, ClaimGroup>();
    for (const [kind, h] of this.handlers) {
      const leaseMs = h.leaseMs ?? DEFAULT_LEASE_MS;
      const own = h.concurrency !== undefined;
      const key = own ? `kind:${kind}` : `shared:${leaseMs}:${h.perKeyLimit ?? ''}`;
      const group = byKey.get(key) ?? { lane: own ? { slots: h.concurrency ?? 0, running: 0 } : this.shared, kinds: [], leaseMs, perKeyLimit: h.perKeyLimit, read: own ? h.claimRead : undefined };
      group.kinds.push(kind);
      byKey.set(key, group);
    }
    this.groups = [...byKey.values()];
    return this.groups;
  }

  /**
   * Claims, for each group that may have work, as many jobs as its lane has free slots. The
   * groups' claims run at once: they share the group commit's next batch (one commit, and on
   * SQLite one turn of its connection) instead of each waiting for the one before it, so a burst's
   * fan-outs and its deliveries are claimed side by side.
   */
  private async poll(): Promise<void> {
    const claims: Promise<void>[] = [];
    for (const group of this.claimGroups()) {
      if (this.stopping) break;
      if (!this.dirty.has(group)) continue;
      const free = group.lane.slots - group.lane.running;
      if (free <= 0) continue; // stays dirty: a finishing job of the lane polls again
      this.dirty.delete(group);
      claims.push(this.claimInto(group, free));
    }
    await Promise.all(claims);
  }

  /** One claim of up to `free` jobs for the group, started as they arrive. */
  private async claimInto(group: ClaimGroup, free: number): Promise<void> {
    let jobs: ClaimedJob[];
    try {
      jobs = await this.queue.claim(this.id, claimOptions(group, free));
    } catch (err) {
      this.log.error({ err }, 'job claim failed');
      return; // the timer's poll looks again, rather than a loop of failing claims
    }
    // A claim that filled every free slot may have left work due: look again at once. One that
    // took fewer took all that was due to this node (or every key it found is at its limit):
    // claiming again could only come back empty, and on the path of every delivery, since polls
    // run one at a time. A finishing job, an enqueue or the timer pokes when that changes.
    if (jobs.length === free) this.dirty.add(group);
    group.lane.running += jobs.length;
    for (const job of jobs) this.track(this.runOne(job, group));
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private async runOne(job: ClaimedJob, group: ClaimGroup): Promise<void> {
    const handler = this.handlers.get(job.kind);
    const leaseMs = group.leaseMs;
    const heartbeat = setInterval(() => {
      this.queue.extend(job, leaseMs).then(
        (ok) => ok || this.log.warn({ job: job.id, kind: job.kind }, 'job lease lost while running'),
        (err: unknown) => this.log.warn({ err, job: job.id }, 'job lease renewal failed'),
      );
    }, Math.max(50, Math.floor(leaseMs / 3)));
    heartbeat.unref();
    // The slot is free once the outcome is queued, not committed: the next claim then goes into
    // the group commit after this outcome (it counts this job as finished) and shares its commit
    // (see JobQueue.claim). Until it commits, the lease still covers the job after a crash.
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      group.lane.running--;
      this.poke(job.kind); // a slot is free, and a per-key limit may have room again
    };
    const alongside: OutcomeWrite[] = [];
    try {
      if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
      await handler.run(job.payload, job, {
        alongside: (write) => void alongside.push(write),
        alongsideMerged: (statement, arg) => void alongside.push(mergedWrite(statement, arg)),
      });
      clearInterval(heartbeat);
      const recorded = this.queue.complete(job, alongside);
      release();
      if (!(await recorded)) this.log.warn({ job: job.id, kind: job.kind }, 'job finished after its lease was lost; outcome not recorded');
    } catch (err) {
      clearInterval(heartbeat);
      const giveUp = err instanceof JobGiveUpError;
      const delay = giveUp ? 0 : err instanceof JobRetryLaterError ? err.retryInMs : handler?.retryInMs ? handler.retryInMs(job.attempt) : backoffMs(job.attempt);
      const message = err instanceof Error ? err.message : String(err);
      const recorded = this.queue.fail(job, message, delay, giveUp, alongside).catch(() => 'unknown');
      release();
      this.log.warn({ job: job.id, kind: job.kind, attempt: job.attempt, outcome: await recorded, err: message }, 'job failed');
    } finally {
      clearInterval(heartbeat);
      release();
    }
  }
}

/** A claim of up to `limit` jobs of the group's kinds. */
function claimOptions(group: ClaimGroup, limit: number): ClaimOptions {
  return {
    kinds: group.kinds,
    limit,
    leaseMs: group.leaseMs,
    ...(group.perKeyLimit !== undefined ? { perKeyLimit: group.perKeyLimit } : {}),
    ...(group.read ? { read: group.read } : {}),
  };
}
