/** PostgreSQL's claims: the plain one and the one with a per-key limit (see JobQueue.claim). */
import { sql, type RawBuilder } from 'kysely';
import type { DbOrTrx } from '../../db/connect.js';
import type { JobKind } from '../kinds.js';
import { stillPending } from './still-pending.js';
import { CLAIMED_COLUMNS, type ClaimedRow, type ClaimRead } from './types.js';

/** The claimed columns (CLAIMED_COLUMNS) of the jobs table under `alias`: only those are sent and parsed. */
const claimedOf = (alias: 'jobs' | 'c') => sql.join(CLAIMED_COLUMNS.map((c) => sql.ref(`${alias}.${c}`)));

/**
 * The locking CTE is evaluated exactly once (MATERIALIZED), and SKIP LOCKED makes concurrent
 * claimers take disjoint rows. A row another claimer updated and committed meanwhile is
 * re-checked against the WHERE clause (READ COMMITTED re-evaluation), so a fresh lease is never
 * taken over; the UPDATE repeats the conditions as a second guard.
 */
export async function claimPostgres(db: DbOrTrx, workerId: string, kinds: readonly JobKind[], limit: number, now: number, lease: number): Promise<ClaimedRow[]> {
  const kindList = sql.join(kinds.map((k) => sql`${k}`));
  const res = await sql<ClaimedRow>`
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
    WHERE jobs.id = due.id AND ${stillPending('jobs.state')} AND (jobs.lease_until_us IS NULL OR jobs.lease_until_us < ${now})
    RETURNING ${claimedOf('jobs')}`.execute(db);
  return res.rows;
}

/**
 * PostgreSQL's fair claim: claim_fair_jobs (migration 0021; its plan 0024; its statements 0030) takes the advisory lock and claims in
 * one call, one round trip. Sent from here, BEGIN, the lock, the UPDATE and COMMIT were four for
 * every freed slot; inside a group commit's transaction the lock and the UPDATE were two.
 */
export async function claimFairPostgres(db: DbOrTrx, workerId: string, kinds: readonly JobKind[], limit: number, perKey: number, now: number, lease: number, read: ClaimRead | undefined): Promise<ClaimedRow[]> {
  const claim = sql`claim_fair_jobs(${[...kinds]}::text[], ${workerId}, ${limit}, ${perKey}, ${now}, ${lease}) AS c`;
  const select = read ? withReadRow(claim, read) : sql<ClaimedRow>`SELECT ${claimedOf('c')} FROM ${claim}`;
  const res = await (db.isTransaction ? select : unsyncedClaim(select)).execute(db);
  return res.rows;
}

/** The claimed rows `c` with each one's ClaimRead row (to_jsonb: one column whatever the table). */
function withReadRow(claim: RawBuilder<unknown>, read: ClaimRead): RawBuilder<ClaimedRow> {
  return sql<ClaimedRow>`SELECT ${claimedOf('c')}, to_jsonb(r) AS read_row FROM ${claim}
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
