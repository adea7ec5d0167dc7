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
import { PostgresAdapter, sql, type Kysely, type RawBuilder, type Selectable, type Transaction, type Updateable } from 'kysely';
import type { Db, DbOrTrx, Dialect } from '../db/connect.js';
import { GroupCommit, runWrite, type BeforeWrite, type MergedStatement } from '../db/group-commit.js';
import type { Database } from '../db/schema.js';
import { nowUs } from '../core/time.js';
import type { JobKind, JobPayloads } from './kinds.js';
import { JOBS_CHANNEL, localEnqueues } from './wake.js';

export interface EnqueueOptions<K extends JobKind = JobKind> {
  kind: K;
  payload: JobPayloads[K];
  /** Earliest run time; default now. */
  runAtUs?: number;
  maxAttempts?: number;
  /** At most one job with this key is ever enqueued; a second enqueue is silently dropped. */
  uniqueKey?: string;
  /** Jobs sharing a fair key share its per-key concurrency limit (see JobHandler.perKeyLimit). */
  fairKey?: string;
}

export interface ClaimedJob<K extends JobKind = JobKind> {
  id: number;
  kind: K;
  payload: JobPayloads[K];
  /** 1 for the first run. */
  attempt: number;
  maxAttempts: number;
  /** The worker holding the lease (part of the fencing token with `attempt`). */
  lockedBy: string;
  /** When the job row was written (the time of the change that caused it). */
  createdUs: number;
  /**
   * The row ClaimOptions.read named, as stored at the claim (null when there is none); absent
   * when the claim read none (SQLite, a claim without `read`).
   */
  readRow?: ClaimReadRow | null;
}

/**
 * A row of another table that a job's run reads first (a webhook delivery's subscription), read by
 * the claim's own statement on PostgreSQL: the row of `table` whose `id` is the payload's field
 * `idField`. The run then skips that round trip, on the path of every job; it still sees the row
 * as stored when it started (its claim). SQLite claims without it: the run reads as before.
 */
export interface ClaimRead {
  table: keyof Database;
  idField: string;
}

/** A ClaimRead's row, as PostgreSQL's to_jsonb gives it: column name to JSON value. */
export type ClaimReadRow = Readonly<Record<string, unknown>>;

export interface ClaimOptions {
  kinds: readonly JobKind[];
  limit: number;
  leaseMs: number;
  /** Most running jobs per fair key, counted over every node; absent = no per-key limit. */
  perKeyLimit?: number;
  /** A row read with each claimed job (PostgreSQL's fair claims; see ClaimRead). */
  read?: ClaimRead;
}

export const DEFAULT_MAX_ATTEMPTS = 10;

/**
 * A write that belongs with a job's outcome (a delivery's attempt record, a fan-out's new jobs):
 * committed in the same transaction as the completion or failure, so a job costs one commit, not
 * one for its own writes and another for its outcome. Run even when the claim was lost (what the
 * run did still happened), and possibly twice until committed (see db/group-commit.ts): inserts
 * and writes guarded by a unique key qualify.
 */
export type OutcomeWrite = ((trx: Transaction<Database>) => Promise<void>) | BeforeWrite;

/**
 * Writes a job. Due jobs wake the workers: at once in this process (see jobs/wake.ts for why that
 * is after the commit on SQLite), and through NOTIFY — delivered at commit — on PostgreSQL.
 */
export async function enqueue<K extends JobKind>(db: DbOrTrx, opts: EnqueueOptions<K>): Promise<void> {
  await enqueueMany(db, [opts]);
}

/**
 * Writes several jobs in one INSERT (a fan-out's deliveries: one round trip instead of one each),
 * then wakes the workers for each kind due now, as `enqueue`.
 */
export async function enqueueMany<K extends JobKind>(db: DbOrTrx, jobs: readonly EnqueueOptions<K>[]): Promise<void> {
  if (jobs.length === 0) return;
  const now = nowUs();
  const rows = jobs.map((opts) => ({
    kind: opts.kind,
    payload: JSON.stringify(opts.payload ?? null),
    run_at_us: opts.runAtUs ?? now,
    max_attempts: opts.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    unique_key: opts.uniqueKey ?? null,
    fair_key: opts.fairKey ?? null,
    created_us: now,
  }));
  let q = db.insertInto('jobs').values(rows);
  // A repeat of a unique key (a fan-out run again) is dropped, the rest of the rows still written.
  if (rows.some((r) => r.unique_key !== null)) q = q.onConflict((oc) => oc.column('unique_key').doNothing());
  await q.execute();
  const due = new Set(rows.filter((r) => r.run_at_us <= now).map((r) => r.kind));
  for (const kind of due) await wake(db, kind);
}

/**
 * enqueueMany as a merged statement (JobOutcome.alongsideMerged): the jobs that the outcomes of
 * one group commit write (the fan-outs' deliveries) are one INSERT, not one per outcome.
 */
export const enqueueMerged: MergedStatement<readonly EnqueueOptions[], void> = async (db, lists) => {
  await enqueueMany(db, lists.flat());
  return lists.map(() => undefined);
};

/**
 * Transactions that already sent a NOTIFY for a kind. PostgreSQL folds the identical
 * notifications of a transaction into one anyway, but each pg_notify is a round trip: a batch
 * store of 100 files sent 100, and a group commit of fan-outs one per delivery job.
 */
const notifiedIn = new WeakMap<DbOrTrx, Set<string>>();

async function wake(db: DbOrTrx, kind: string): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  if (postgres) {
    const sent = db.isTransaction ? (notifiedIn.get(db) ?? new Set<string>()) : null;
    if (!sent?.has(kind)) await sql`SELECT pg_notify(${JOBS_CHANNEL}, current_schema() || ' ' || ${kind}::text)`.execute(db);
    if (sent) notifiedIn.set(db, sent.add(kind));
  }
  if (!postgres || !db.isTransaction) localEnqueues.emit(kind);
}

type JobRow = Selectable<Database['jobs']>;
/** A claimed job's row, with the ClaimRead's row when the claim read one. */
type ClaimedRow = JobRow & { read_row?: ClaimReadRow | null };

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
    const rows = await this.writes.statement((db) => {
      const now = nowUs();
      const lease = now + leaseMs * 1000;
      if (opts.perKeyLimit !== undefined) return this.claimFair(db, workerId, kinds, limit, opts.perKeyLimit, now, lease, opts.read);
      if (this.dialect === 'postgres') return this.claimPostgres(db, workerId, kinds, limit, now, lease);
      return this.claimSqlite(db, workerId, kinds, limit, now, lease);
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
    const kindList = sql.join(kinds.map((k) => sql`${k}`));
    const due = sql`x.state = 'pending' AND x.kind IN (${kindList}) AND x.run_at_us <= ${now}
        AND (x.lease_until_us IS NULL OR x.lease_until_us < ${now}) AND x.attempts < x.max_attempts`;
    // Only a key's `perKey` oldest due jobs can get a slot, so only those are ranked (`head`: one
    // index range per key, jobs_kind_state_key_due). Ranking every due job cost 8 ms a claim with
    // 2,000 of one project due; this way it is about 1 ms. Jobs without a key rank among
    // themselves, as before. Every step MATERIALIZED: evaluated once. SQLite has no LATERAL: a
    // correlated IN runs once per key. (PostgreSQL, which planned that IN as a filter over every
    // job, runs the same statement with a LATERAL join inside claim_fair_jobs.)
    // The keys are walked by a loose index scan (`key_walk`: per kind, the next key above the
    // last one, one probe of jobs_kind_state_key_due each), as claim_fair_jobs does: a DISTINCT
    // read every pending job of the kinds, 0.5-0.8 ms of the claim with 2,000 of one project
    // pending (4 µs walked).
    const kindRows = sql.join(kinds.map((k) => sql`(${k})`));
    const res = await sql<JobRow>`
        WITH RECURSIVE running AS MATERIALIZED (
          SELECT fair_key, COUNT(*) AS n FROM jobs
          WHERE state = 'pending' AND kind IN (${kindList}) AND lease_until_us >= ${now}
          GROUP BY fair_key
        ),
        key_walk(kind, fair_key) AS (
          SELECT k.column1, (SELECT min(fair_key) FROM jobs WHERE kind = k.column1 AND state = 'pending' AND fair_key IS NOT NULL)
          FROM (VALUES ${kindRows}) AS k
          UNION ALL
          SELECT w.kind, (SELECT min(fair_key) FROM jobs WHERE kind = w.kind AND state = 'pending' AND fair_key > w.fair_key)
          FROM key_walk w WHERE w.fair_key IS NOT NULL
        ),
        fair_keys AS MATERIALIZED (
          SELECT DISTINCT fair_key FROM key_walk WHERE fair_key IS NOT NULL
        ),
        head AS MATERIALIZED (
          SELECT j.id, j.fair_key, j.run_at_us FROM fair_keys k JOIN jobs j ON j.id IN (
            SELECT x.id FROM jobs x WHERE ${due} AND x.fair_key = k.fair_key ORDER BY x.run_at_us, x.id LIMIT ${perKey})
          UNION ALL
          SELECT * FROM (
            SELECT x.id AS id, x.fair_key AS fair_key, x.run_at_us AS run_at_us FROM jobs x
            WHERE ${due} AND x.fair_key IS NULL ORDER BY x.run_at_us, x.id LIMIT ${perKey}
          ) AS keyless
        ),
        ranked AS MATERIALIZED (
          SELECT h.id AS id, h.run_at_us AS run_at_us,
            ROW_NUMBER() OVER (PARTITION BY h.fair_key ORDER BY h.run_at_us, h.id) + COALESCE(r.n, 0) AS slot
          FROM head h LEFT JOIN running r ON r.fair_key = h.fair_key
        )
        UPDATE jobs SET locked_by = ${workerId}, lease_until_us = ${lease}, attempts = attempts + 1
        WHERE id IN (SELECT id FROM ranked WHERE slot <= ${perKey} ORDER BY slot, run_at_us LIMIT ${limit})
          AND state = 'pending' AND (lease_until_us IS NULL OR lease_until_us < ${now})
        RETURNING *`.execute(db);
    return res.rows;
  }

  /**
   * The locking CTE is evaluated exactly once (MATERIALIZED), and SKIP LOCKED makes concurrent
   * claimers take disjoint rows. A row another claimer updated and committed meanwhile is
   * re-checked against the WHERE clause (READ COMMITTED re-evaluation), so a fresh lease is never
   * taken over; the UPDATE repeats the conditions as a second guard.
   */
  private async claimPostgres(db: DbOrTrx, workerId: string, kinds: readonly JobKind[], limit: number, now: number, lease: number): Promise<JobRow[]> {
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
      RETURNING jobs.*`.execute(db);
    return res.rows;
  }

  /** SQLite: one writer at a time, so the UPDATE with its subquery is atomic. */
  private async claimSqlite(db: DbOrTrx, workerId: string, kinds: readonly JobKind[], limit: number, now: number, lease: number): Promise<JobRow[]> {
    const due = db
      .selectFrom('jobs')
      .select('id')
      .where('state', '=', 'pending')
      .where('kind', 'in', [...kinds])
      .where('run_at_us', '<=', now)
      .where((eb) => eb.or([eb('lease_until_us', 'is', null), eb('lease_until_us', '<', now)]))
      .whereRef('attempts', '<', 'max_attempts')
      .orderBy('run_at_us')
      .limit(limit);
    return db
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

/** Updates the job only while it still carries this claim (see the fencing note at the top). */
async function fencedUpdate(db: DbOrTrx, job: ClaimedJob, set: Updateable<Database['jobs']>): Promise<boolean> {
  const r = await db
    .updateTable('jobs')
    .set(set)
    .where('id', '=', job.id)
    .where('state', '=', 'pending')
    .where('locked_by', '=', job.lockedBy)
    .where('attempts', '=', job.attempt)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * PostgreSQL's fair claim: claim_fair_jobs (migration 0021; its plan 0024) takes the advisory lock and claims in
 * one call, one round trip. Sent from here, BEGIN, the lock, the UPDATE and COMMIT were four for
 * every freed slot; inside a group commit's transaction the lock and the UPDATE were two.
 */
async function claimFairPostgres(db: DbOrTrx, workerId: string, kinds: readonly JobKind[], limit: number, perKey: number, now: number, lease: number, read: ClaimRead | undefined): Promise<ClaimedRow[]> {
  const claim = sql`claim_fair_jobs(${[...kinds]}::text[], ${workerId}, ${limit}, ${perKey}, ${now}, ${lease}) AS c`;
  const select = read ? withReadRow(claim, read) : sql<ClaimedRow>`SELECT c.* FROM ${claim}`;
  const res = await (db.isTransaction ? select : unsyncedClaim(select)).execute(db);
  return res.rows;
}

/** The claimed rows `c` with each one's ClaimRead row (to_jsonb: one column whatever the table). */
function withReadRow(claim: RawBuilder<unknown>, read: ClaimRead): RawBuilder<ClaimedRow> {
  return sql<ClaimedRow>`SELECT c.*, to_jsonb(r) AS read_row FROM ${claim}
    LEFT JOIN ${sql.table(read.table)} AS r ON r.id = (c.payload::jsonb ->> ${read.idField})::bigint`;
}

/**
 * A claim in a transaction of its own, committed without waiting for PostgreSQL's WAL flush
 * (synchronous_commit off for that transaction only): as SQLite's claims are answered before
 * their WAL sync (GroupCommit's `unsynced`). A claim lost in a server crash only makes its jobs
 * claimable again, as the end of their leases would; a later durable commit (the jobs' outcomes)
 * flushes it anyway, since the WAL is flushed in order. The flush was most of a lone claim's time
 * (about 1-2 ms against 0.2 ms for a round trip), and a node's claims and outcomes follow one
 * another in its group commit. Inside a group commit's transaction the claim leaves the setting
 * alone: the outcomes committed with it must be durable when answered.
 *
 * `select` is the claim's SELECT without a WHERE clause. set_config(…, true) lasts until the end
 * of the statement's transaction, which is after the statement; evaluated for each claimed row,
 * so it is set whenever the claim wrote something (a claim of no rows has nothing to flush).
 */
function unsyncedClaim(select: RawBuilder<ClaimedRow>): RawBuilder<ClaimedRow> {
  return sql<ClaimedRow>`${select} WHERE set_config('synchronous_commit', 'off', true) IS NOT NULL`;
}

/**
 * Marks every job of `jobs` done that still carries its claim (fenced like fencedUpdate), in one
 * UPDATE; true for each one it marked. The list is padded to a power of two with repeats of its
 * last claim (a repeated term matches the same row) so that few distinct SQL texts exist: SQLite
 * keeps a prepared statement per text (statement-cache.ts). It touches only the rows of its own
 * claims, so on PostgreSQL it joins the batch's other merged writes in one statement (`part`).
 */
const completeClaims: MergedStatement<ClaimedJob, boolean> = Object.assign(
  async (db: Kysely<Database>, jobs: readonly ClaimedJob[]) => completedOf(jobs, await completion(db, jobs).execute()),
  { part: (db: Kysely<Database>, jobs: readonly ClaimedJob[]) => ({ query: completion(db, jobs), returnsRows: true, fromRows: (rows: readonly Record<string, unknown>[]) => completedOf(jobs, rows as readonly CompletedRow[]) }) },
);

type CompletedRow = Pick<JobRow, 'id' | 'locked_by' | 'attempts'>;

/** The fenced UPDATE of completeClaims, returning the claims it marked. */
function completion(db: Kysely<Database>, jobs: readonly ClaimedJob[]) {
  const terms = [...jobs];
  while (terms.length & (terms.length - 1)) terms.push(jobs[jobs.length - 1]!);
  return db
    .updateTable('jobs')
    .set({ state: 'done', lease_until_us: null, last_error: null })
    .where('state', '=', 'pending')
    .where((eb) => eb.or(terms.map((j) => eb.and([eb('id', '=', j.id), eb('locked_by', '=', j.lockedBy), eb('attempts', '=', j.attempt)]))))
    .returning(['id', 'locked_by', 'attempts']);
}

/** For each job, whether its claim is among the marked rows. */
function completedOf(jobs: readonly ClaimedJob[], rows: readonly CompletedRow[]): boolean[] {
  const claim = (id: number, lockedBy: string | null, attempts: number) => `${id}:${attempts}:${lockedBy ?? ''}`;
  const done = new Set(rows.map((r) => claim(Number(r.id), r.locked_by, Number(r.attempts))));
  return jobs.map((j) => done.has(claim(j.id, j.lockedBy, j.attempt)));
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
