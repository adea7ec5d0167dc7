/**
 * Durable job queue in the metadata store (the outbox). Jobs are enqueued in the same transaction
 * as the change that causes them; workers claim due jobs with a lease (FOR UPDATE SKIP LOCKED on
 * PostgreSQL; SQLite has a single writer, so its UPDATE is atomic anyway). A job whose worker died
 * is claimable again once its lease ends. Delivery is at-least-once: handlers must be idempotent.
 */
import type { Kysely, Selectable, Transaction } from 'kysely';
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

export class JobQueue {
  constructor(private readonly db: Kysely<Database>, private readonly dialect: Dialect) {}

  /** Claims up to `limit` due jobs of the given kinds for `workerId`, leased for `leaseMs`. */
  async claim(workerId: string, kinds: string[], limit: number, leaseMs: number): Promise<ClaimedJob[]> {
    if (kinds.length === 0) return [];
    const now = nowUs();
    let due = this.db
      .selectFrom('jobs')
      .select('id')
      .where('state', '=', 'pending')
      .where('kind', 'in', kinds)
      .where('run_at_us', '<=', now)
      .where((eb) => eb.or([eb('lease_until_us', 'is', null), eb('lease_until_us', '<', now)]))
      .orderBy('run_at_us')
      .limit(limit);
    if (this.dialect === 'postgres') due = due.forUpdate().skipLocked();
    const rows = await this.db
      .updateTable('jobs')
      .set((eb) => ({ locked_by: workerId, lease_until_us: now + leaseMs * 1000, attempts: eb('attempts', '+', 1) }))
      .where('id', 'in', due)
      .where('state', '=', 'pending')
      .returningAll()
      .execute();
    return rows.map(toClaimed);
  }

  async complete(id: number): Promise<void> {
    await this.db.updateTable('jobs').set({ state: 'done', lease_until_us: null, last_error: null }).where('id', '=', id).execute();
  }

  /** Records a failure; reschedules after `retryInMs`, or marks the job dead when out of attempts. */
  async fail(job: ClaimedJob, error: string, retryInMs: number): Promise<'retry' | 'dead'> {
    const dead = job.attempt >= job.maxAttempts;
    await this.db
      .updateTable('jobs')
      .set({
        state: dead ? 'dead' : 'pending',
        lease_until_us: null,
        locked_by: null,
        last_error: error.slice(0, 2000),
        run_at_us: nowUs() + retryInMs * 1000,
      })
      .where('id', '=', job.id)
      .execute();
    return dead ? 'dead' : 'retry';
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

function toClaimed(r: Selectable<Database['jobs']>): ClaimedJob {
  return { id: Number(r.id), kind: r.kind, payload: JSON.parse(r.payload) as unknown, attempt: r.attempts, maxAttempts: r.max_attempts };
}

/** Exponential backoff with full jitter, capped. */
export function backoffMs(attempt: number, baseMs = 1000, capMs = 3600_000): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}
