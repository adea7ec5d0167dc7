/**
 * Durable job queue in the metadata store (the outbox). Jobs are enqueued in the same transaction
 * as the change that causes them; workers claim due jobs with a lease (FOR UPDATE SKIP LOCKED on
 * PostgreSQL; SQLite has a single writer, so its UPDATE is atomic anyway). A job whose worker died
 * is claimable again once its lease ends. Delivery is at-least-once: handlers must be idempotent.
 *
 * Fencing: a claim is identified by (locked_by, attempts). complete/fail/extend only touch a row
 * that still carries the caller's claim, so a worker that lost its lease (stalled past it, and the
 * job was claimed again elsewhere) can never overwrite the newer claim's outcome.
 */
import { sql, type Kysely, type Selectable, type Transaction, type Updateable } from 'kysely';
import type { Dialect } from '../db/connect.js';
import type { Database } from '../db/schema.js';
import { nowUs } from '../core/time.js';

export type DbOrTrx = Kysely<Database> | Transaction<Database>;

export interface EnqueueOptions {
  kind: string;
  payload: unknown;
  /** Earliest run time; default now. */
  runAtUs?: number;
  maxAttempts?: number;
  /** At most one job with this key is ever enqueued; a second enqueue is silently dropped. */
  uniqueKey?: string;
}

export interface ClaimedJob {
  id: number;
  kind: string;
  payload: unknown;
  /** 1 for the first run. */
  attempt: number;
  maxAttempts: number;
  /** The worker holding the lease (part of the fencing token with `attempt`). */
  lockedBy: string;
  /** When the job row was written (the time of the change that caused it). */
  createdUs: number;
}

export const DEFAULT_MAX_ATTEMPTS = 10;

export async function enqueue(db: DbOrTrx, opts: EnqueueOptions): Promise<void> {
  const values = {
    kind: opts.kind,
    payload: JSON.stringify(opts.payload ?? null),
    run_at_us: opts.runAtUs ?? nowUs(),
    max_attempts: opts.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    unique_key: opts.uniqueKey ?? null,
    created_us: nowUs(),
  };
  let q = db.insertInto('jobs').values(values);
  if (opts.uniqueKey) q = q.onConflict((oc) => oc.column('unique_key').doNothing());
  await q.execute();
}

type JobRow = Selectable<Database['jobs']>;

export class JobQueue {
  constructor(private readonly db: Kysely<Database>, private readonly dialect: Dialect) {}

  /** Claims up to `limit` due jobs of the given kinds for `workerId`, leased for `leaseMs`. */
  async claim(workerId: string, kinds: string[], limit: number, leaseMs: number): Promise<ClaimedJob[]> {
    if (kinds.length === 0 || limit <= 0) return [];
    await this.buryAbandoned(kinds);
    const now = nowUs();
    const lease = now + leaseMs * 1000;
    const rows = this.dialect === 'postgres' ? await this.claimPostgres(workerId, kinds, limit, now, lease) : await this.claimSqlite(workerId, kinds, limit, now, lease);
    return rows.map(toClaimed);
  }

  /**
   * The locking CTE is evaluated exactly once (MATERIALIZED), and SKIP LOCKED makes concurrent
   * claimers take disjoint rows. A row another claimer updated and committed meanwhile is
   * re-checked against the WHERE clause (READ COMMITTED re-evaluation), so a fresh lease is never
   * taken over; the UPDATE repeats the conditions as a second guard.
   */
  private async claimPostgres(workerId: string, kinds: string[], limit: number, now: number, lease: number): Promise<JobRow[]> {
    const kindList = sql.join(kinds.map((k) => sql`${k}`));
    const res = await sql<JobRow>`
      WITH due AS MATERIALIZED (
        SELECT id FROM jobs
        WHERE state = 'pending' AND kind IN (${kindList}) AND run_at_us <= ${now}
          AND (lease_until_us IS NULL OR lease_until_us < ${now}) AND attempts < max_attempts
        ORDER BY run_at_us
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      )
      UPDATE jobs SET locked_by = ${workerId}, lease_until_us = ${lease}, attempts = jobs.attempts + 1
      FROM due
      WHERE jobs.id = due.id AND jobs.state = 'pending' AND (jobs.lease_until_us IS NULL OR jobs.lease_until_us < ${now})
      RETURNING jobs.*`.execute(this.db);
    return res.rows;
  }

  /** SQLite: one writer at a time, so the UPDATE with its subquery is atomic. */
  private async claimSqlite(workerId: string, kinds: string[], limit: number, now: number, lease: number): Promise<JobRow[]> {
    const due = this.db
      .selectFrom('jobs')
      .select('id')
      .where('state', '=', 'pending')
      .where('kind', 'in', kinds)
      .where('run_at_us', '<=', now)
      .where((eb) => eb.or([eb('lease_until_us', 'is', null), eb('lease_until_us', '<', now)]))
      .whereRef('attempts', '<', 'max_attempts')
      .orderBy('run_at_us')
      .limit(limit);
    return this.db
      .updateTable('jobs')
      .set((eb) => ({ locked_by: workerId, lease_until_us: lease, attempts: eb('attempts', '+', 1) }))
      .where('id', 'in', due)
      .where('state', '=', 'pending')
      .returningAll()
      .execute();
  }

  /**
   * A job whose last allowed attempt died with its process (lease expired, no attempts left) is
   * dead: running it again would exceed max_attempts, and a job that kills its worker every time
   * must not loop forever.
   */
  private async buryAbandoned(kinds: string[]): Promise<void> {
    const now = nowUs();
    await this.db
      .updateTable('jobs')
      .set({ state: 'dead', lease_until_us: null, last_error: 'worker lost during the last attempt (lease expired)' })
      .where('state', '=', 'pending')
      .where('kind', 'in', kinds)
      .where('lease_until_us', '<', now)
      .whereRef('attempts', '>=', 'max_attempts')
      .execute();
  }

  /** Marks the job done. False when the claim was lost (someone else holds the job now). */
  async complete(job: ClaimedJob): Promise<boolean> {
    return this.fenced(job, { state: 'done', lease_until_us: null, last_error: null });
  }

  /**
   * Records a failure; reschedules after `retryInMs`, or marks the job dead when out of attempts
   * or when `giveUp` is set. 'lost' when the claim was no longer ours.
   */
  async fail(job: ClaimedJob, error: string, retryInMs: number, giveUp = false): Promise<'retry' | 'dead' | 'lost'> {
    const dead = giveUp || job.attempt >= job.maxAttempts;
    const ok = await this.fenced(job, {
      state: dead ? 'dead' : 'pending',
      lease_until_us: null,
      locked_by: null,
      last_error: error.slice(0, 2000),
      run_at_us: nowUs() + retryInMs * 1000,
    });
    return ok ? (dead ? 'dead' : 'retry') : 'lost';
  }

  /** Extends a running job's lease (heartbeat). False when the claim was lost. */
  async extend(job: ClaimedJob, leaseMs: number): Promise<boolean> {
    return this.fenced(job, { lease_until_us: nowUs() + leaseMs * 1000 });
  }

  private async fenced(job: ClaimedJob, set: Updateable<Database['jobs']>): Promise<boolean> {
    const r = await this.db
      .updateTable('jobs')
      .set(set)
      .where('id', '=', job.id)
      .where('state', '=', 'pending')
      .where('locked_by', '=', job.lockedBy)
      .where('attempts', '=', job.attempt)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Gives leases held by this worker back, so another process may pick the jobs up at once. */
  async releaseLeases(workerId: string): Promise<void> {
    await this.db
      .updateTable('jobs')
      .set({ lease_until_us: null, locked_by: null, attempts: (eb) => eb('attempts', '-', 1) })
      .where('locked_by', '=', workerId)
      .where('state', '=', 'pending')
      .where('lease_until_us', 'is not', null)
      .execute();
  }

  /** Removes finished jobs older than `olderThanUs` so the table stays small. */
  async prune(olderThanUs: number): Promise<void> {
    await this.db.deleteFrom('jobs').where('state', '=', 'done').where('created_us', '<', olderThanUs).execute();
  }
}

function toClaimed(r: JobRow): ClaimedJob {
  return {
    id: Number(r.id),
    kind: r.kind,
    payload: JSON.parse(r.payload) as unknown,
    attempt: Number(r.attempts),
    maxAttempts: Number(r.max_attempts),
    lockedBy: r.locked_by ?? '',
    createdUs: Number(r.created_us),
  };
}

/** Exponential backoff, capped, with jitter over the upper half (so delays still grow). */
export function backoffMs(attempt: number, baseMs = 1000, capMs = 3600_000): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}
