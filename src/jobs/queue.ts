/**
 * Durable job queue in the metadata store (the outbox). Jobs are enqueued in the same transaction
 * as the change that causes them; workers claim due jobs with a lease (FOR UPDATE SKIP LOCKED on
 * PostgreSQL; SQLite has a single writer, so its UPDATE is atomic anyway). A job whose worker died
 * is claimable again once its lease ends. Delivery is at-least-once: handlers must be idempotent.
 *
 * Fencing: a claim is identified by (locked_by, attempts). complete/fail/extend only touch a row
 * that still carries the caller's claim, so a worker that lost its lease (stalled past it, and the
 * job was claimed again elsewhere) can never overwrite the newer claim's outcome.
 *
 * Fairness: a job may carry a fair key (e.g. the project of a webhook delivery). A kind claimed
 * with a per-key limit never has more than that many jobs of one key running across all nodes,
 * and one claim takes the keys in turns, so one key's backlog cannot take every slot.
 */
import type { Kysely, Updateable } from 'kysely';
import type { Db, DbOrTrx, Dialect } from '../db/connect.js';
import { GroupCommit, runWrite } from '../db/group-commit.js';
import type { Database } from '../db/schema.js';
import { nowUs } from '../core/time.js';
import type { JobKind, JobPayloads } from './kinds.js';
import { claimFairPostgres, claimPostgres } from './queue/claim-postgres.js';
import { claimFairSqlite, claimSqlite } from './queue/claim-sqlite.js';
import { enqueue } from './queue/enqueue.js';
import { completeClaims, fencedUpdate } from './queue/outcome.js';
import type { ClaimedJob, ClaimedRow, ClaimOptions, ClaimRead, EnqueueOptions, OutcomeWrite } from './queue/types.js';

// The queue's public face: its parts are in queue/ (types, enqueue, each store's claims, outcomes).
export { enqueue, enqueueCombinable, enqueueMany, enqueueMerged } from './queue/enqueue.js';
export { DEFAULT_MAX_ATTEMPTS, type ClaimedJob, type ClaimOptions, type ClaimRead, type ClaimReadRow, type EnqueueOptions, type OutcomeWrite } from './queue/types.js';

export class JobQueue {
  private readonly db: Kysely<Database>;
  private readonly dialect: Dialect;
  /** Outcomes of concurrent jobs share commits. */
  private readonly writes: GroupCommit;
  private readonly lastBurial = new Map<string, number>();

  constructor(store: Db) {
    this.db = store.kysely;
    this.dialect = store.dialect;
    this.writes = new GroupCommit(store);
  }

  /** Enqueues outside any transaction (a job caused by no state change, e.g. a periodic one). */
  enqueue<K extends JobKind>(opts: EnqueueOptions<K>): Promise<void> {
    return enqueue(this.db, opts);
  }

  /**
   * Claims up to `limit` due jobs of the given kinds for `workerId`, leased for `leaseMs`. The claim
   * goes through the group commit: it shares its commit with the outcomes of the jobs that just
   * finished (on SQLite every commit is an fsync, and a claim per freed slot was one more each).
   * Outcomes queued before it are written first, so it counts their slots as free. It is answered
   * at its commit, not after the WAL sync (SQLite) or flush (PostgreSQL, when it commits on its
   * own: unsyncedClaim): a claim lost in a crash only makes its jobs claimable again, as the
   * crash's end of their leases would; their outcomes, written later, are synced with everything
   * before them.
   */
  async claim(workerId: string, opts: ClaimOptions): Promise<ClaimedJob[]> {
    const { kinds, limit, leaseMs } = opts;
    if (kinds.length === 0 || limit <= 0) return [];
    await this.buryAbandoned(kinds, leaseMs);
    const rows = await this.writes.statement((db): Promise<ClaimedRow[]> => {
      const now = nowUs();
      const lease = now + leaseMs * 1000;
      if (opts.perKeyLimit !== undefined) return this.claimFair(db, workerId, kinds, limit, opts.perKeyLimit, now, lease, opts.read);
      if (this.dialect === 'postgres') return claimPostgres(db, workerId, kinds, limit, now, lease);
      return claimSqlite(db, workerId, kinds, limit, now, lease);
    }, { unsynced: true });
    return rows.map(toClaimed);
  }

  /**
   * Claims with a per-key limit. Each due job is ranked within its key (oldest first) after the
   * key's jobs already running on any node; only ranks within the limit are taken, lowest rank
   * first, so one claim takes the keys in turns. On PostgreSQL the claim holds a transaction-level
   * advisory lock: two nodes counting the same running jobs at once could otherwise both fill a
   * key up to its limit; lock and claim are one call of claim_fair_jobs (claimFairPostgres). The
   * UPDATE re-checks that each row is still claimable. Inside a group commit's transaction the
   * lock is held until that commits (a few outcomes' writes longer).
   */
  private async claimFair(db: DbOrTrx, workerId: string, kinds: readonly JobKind[], limit: number, perKey: number, now: number, lease: number, read: ClaimRead | undefined): Promise<ClaimedRow[]> {
    if (this.dialect === 'postgres') return claimFairPostgres(db, workerId, kinds, limit, perKey, now, lease, read);
    return claimFairSqlite(db, workerId, kinds, limit, perKey, now, lease);
  }

  /**
   * A job whose last allowed attempt died with its process (lease expired, no attempts left) is
   * dead: running it again would exceed max_attempts, and a job that kills its worker every time
   * must not loop forever.
   */
  private async buryAbandoned(kinds: readonly JobKind[], leaseMs: number): Promise<void> {
    // Bookkeeping only (such a job is never claimed again either way), so not on every claim: at
    // most once a second per set of kinds, or once per lease when leases are shorter.
    const key = kinds.join(',');
    const last = this.lastBurial.get(key) ?? 0;
    if (Date.now() - last < Math.min(1000, leaseMs)) return;
    this.lastBurial.set(key, Date.now());
    const now = nowUs();
    await this.db
      .updateTable('jobs')
      .set({ state: 'dead', lease_until_us: null, last_error: 'worker lost during the last attempt (lease expired)' })
      .where('state', '=', 'pending')
      .where('kind', 'in', [...kinds])
      .where('lease_until_us', '<', now)
      .whereRef('attempts', '>=', 'max_attempts')
      .execute();
  }

  /**
   * Marks the job done, committing `alongside` in the same transaction. False when the claim was
   * lost (someone else holds the job now). The completions of a group commit's batch are one
   * statement (completeClaims): one round trip for the batch on PostgreSQL instead of one per job.
   */
  async complete(job: ClaimedJob, alongside: readonly OutcomeWrite[] = []): Promise<boolean> {
    return this.writes.merged(completeClaims, job, alongside);
  }

  /**
   * Records a failure; reschedules after `retryInMs`, or marks the job dead when out of attempts
   * or when `giveUp` is set. 'lost' when the claim was no longer ours.
   */
  async fail(job: ClaimedJob, error: string, retryInMs: number, giveUp = false, alongside: readonly OutcomeWrite[] = []): Promise<'retry' | 'dead' | 'lost'> {
    const dead = giveUp || job.attempt >= job.maxAttempts;
    const set = { state: dead ? 'dead' : 'pending', lease_until_us: null, locked_by: null, last_error: error.slice(0, 2000), run_at_us: nowUs() + retryInMs * 1000 } as const;
    const ok = await this.fenced(job, set, alongside);
    return ok ? (dead ? 'dead' : 'retry') : 'lost';
  }

  /** Extends a running job's lease (heartbeat). False when the claim was lost. */
  async extend(job: ClaimedJob, leaseMs: number): Promise<boolean> {
    // Straight to the store, not through the group commit: a heartbeat must not queue behind outcomes.
    return fencedUpdate(this.db, job, { lease_until_us: nowUs() + leaseMs * 1000 });
  }

  /** An outcome: through the group commit, with the writes that belong to it. */
  private async fenced(job: ClaimedJob, set: Updateable<Database['jobs']>, alongside: readonly OutcomeWrite[]): Promise<boolean> {
    if (alongside.length === 0) return this.writes.statement((db) => fencedUpdate(db, job, set));
    return this.writes.run(async (trx) => {
      for (const write of alongside) await runWrite(trx, write);
      return fencedUpdate(trx, job, set);
    });
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

  /** For /metrics: the wait of the oldest due, unclaimed job (ms, 0 when none) and the dead jobs kept. */
  async stats(): Promise<{ lagMs: number; dead: number }> {
    const now = nowUs();
    const oldest = await this.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.min('run_at_us').as('due'))
      .where('state', '=', 'pending')
      .where('run_at_us', '<=', now)
      .where((eb) => eb.or([eb('lease_until_us', 'is', null), eb('lease_until_us', '<', now)]))
      .executeTakeFirst();
    const dead = await this.db.selectFrom('jobs').select((eb) => eb.fn.countAll().as('n')).where('state', '=', 'dead').executeTakeFirst();
    const due = oldest?.due === null || oldest?.due === undefined ? now : Number(oldest.due);
    return { lagMs: Math.max(0, (now - due) / 1000), dead: Number(dead?.n ?? 0) };
  }

  /** Removes finished jobs older than `olderThanUs` so the table stays small. */
  async prune(olderThanUs: number): Promise<void> {
    await this.db.deleteFrom('jobs').where('state', '=', 'done').where('created_us', '<', olderThanUs).execute();
  }
}

/** Rows are claimed by kind, so a row's payload is its kind's (written by the typed `enqueue`). */
function toClaimed(r: ClaimedRow): ClaimedJob {
  const payload: JobPayloads[JobKind] = JSON.parse(r.payload);
  return {
    id: Number(r.id),
    kind: r.kind as JobKind,
    payload,
    attempt: Number(r.attempts),
    maxAttempts: Number(r.max_attempts),
    lockedBy: r.locked_by ?? '',
    createdUs: Number(r.created_us),
    ...(r.read_row !== undefined ? { readRow: r.read_row } : {}),
  };
}

/** Exponential backoff, capped, with jitter over the upper half (so delays still grow). */
export function backoffMs(attempt: number, baseMs = 1000, capMs = 3600_000): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}
