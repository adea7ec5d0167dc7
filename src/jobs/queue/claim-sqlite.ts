/** SQLite's claims: the plain one and the one with a per-key limit (see JobQueue.claim). */
import { sql } from 'kysely';
import type { DbOrTrx } from '../../db/connect.js';
import { boundLimit, literalLimit } from '../../db/reusable-query.js';
import type { JobKind } from '../kinds.js';
import { stillPending } from './still-pending.js';
import { CLAIMED_COLUMNS, type ClaimedRow } from './types.js';

/** RETURNING of the claimed columns only (CLAIMED_COLUMNS). */
const returnedColumns = sql.join(CLAIMED_COLUMNS.map((c) => sql.ref(c)));

/**
 * SQLite: one writer at a time, so the UPDATE with its subquery is atomic. Its LIMIT, the free
 * slots, is bound without re-preparing the statement on every run (boundLimit).
 */
export async function claimSqlite(db: DbOrTrx, workerId: string, kinds: readonly JobKind[], limit: number, now: number, lease: number): Promise<ClaimedRow[]> {
  const due = db
    .selectFrom('jobs')
    .select('id')
    .where('state', '=', 'pending')
    .where('kind', 'in', [...kinds])
    .where('run_at_us', '<=', now)
    .where((eb) => eb.or([eb('lease_until_us', 'is', null), eb('lease_until_us', '<', now)]))
    .whereRef('attempts', '<', 'max_attempts')
    .orderBy('run_at_us')
    .limit(boundLimit(limit));
  return db
    .updateTable('jobs')
    .set((eb) => ({ locked_by: workerId, lease_until_us: lease, attempts: eb('attempts', '+', 1) }))
    .where('id', 'in', due)
    .where(stillPending())
    .returning(CLAIMED_COLUMNS)
    .execute();
}

/** A claim with a per-key limit (JobQueue.claimFair), on SQLite. */
export async function claimFairSqlite(db: DbOrTrx, workerId: string, kinds: readonly JobKind[], limit: number, perKey: number, now: number, lease: number): Promise<ClaimedRow[]> {
  const kindList = sql.join(kinds.map((k) => sql`${k}`));
  const due = sql`x.state = 'pending' AND x.kind IN (${kindList}) AND x.run_at_us <= ${now}
      AND (x.lease_until_us IS NULL OR x.lease_until_us < ${now}) AND x.attempts < x.max_attempts`;
  // Only a key's `perKey` oldest due jobs can get a slot, so only those are ranked (`head`: one
  // index range per key, jobs_kind_state_key_due). Ranking every due job cost 8 ms a claim with
  // 2,000 of one project due; this way about 0.15 ms of SQLite's time (20 taken beside 44 of
  // the project's running, RETURNING included). Jobs without a key rank among
  // themselves. Every step MATERIALIZED: evaluated once. SQLite has no LATERAL: a
  // correlated IN runs once per key. (PostgreSQL, which planned that IN as a filter over every
  // job, runs the same statement with a LATERAL join inside claim_fair_jobs.)
  // The keys are walked by a loose index scan (`key_walk`: per kind, the next key above the
  // last one, one probe of jobs_kind_state_key_due each), as claim_fair_jobs does: a DISTINCT
  // read every pending job of the kinds, 0.5-0.8 ms of the claim with 2,000 of one project
  // pending (4 µs walked).
  // Neither LIMIT is a bare bound parameter: SQLite then planned the whole statement again on
  // every claim, two thirds of its time (db/reusable-query.ts). The per-key limit is one of a few
  // values (a kind's setting), a literal; the claim's own limit, the free slots, is boundLimit's.
  const perKeyLimit = literalLimit(perKey);
  const kindRows = sql.join(kinds.map((k) => sql`(${k})`));
  const res = await sql<ClaimedRow>`
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
          SELECT x.id FROM jobs x WHERE ${due} AND x.fair_key = k.fair_key ORDER BY x.run_at_us, x.id LIMIT ${perKeyLimit})
        UNION ALL
        SELECT * FROM (
          SELECT x.id AS id, x.fair_key AS fair_key, x.run_at_us AS run_at_us FROM jobs x
          WHERE ${due} AND x.fair_key IS NULL ORDER BY x.run_at_us, x.id LIMIT ${perKeyLimit}
        ) AS keyless
      ),
      ranked AS MATERIALIZED (
        SELECT h.id AS id, h.run_at_us AS run_at_us,
          ROW_NUMBER() OVER (PARTITION BY h.fair_key ORDER BY h.run_at_us, h.id) + COALESCE(r.n, 0) AS slot
        FROM head h LEFT JOIN running r ON r.fair_key = h.fair_key
      )
      UPDATE jobs SET locked_by = ${workerId}, lease_until_us = ${lease}, attempts = attempts + 1
      WHERE id IN (SELECT id FROM ranked WHERE slot <= ${perKey} ORDER BY slot, run_at_us LIMIT ${boundLimit(limit)})
        AND ${stillPending()} AND (lease_until_us IS NULL OR lease_until_us < ${now})
      RETURNING ${returnedColumns}`.execute(db);
  return res.rows;
}
