import { sql } from 'kysely';
import type { MigrationStep } from './types.js';

/**
 * PostgreSQL: claim_fair_jobs (0021) reads only the rows it picks. `EXPLAIN (ANALYZE, BUFFERS)` of
 * its statement with 2,000 due deliveries of one project showed two reads of every pending job
 * (docs/performance.md, the webhook burst on PostgreSQL):
 *   - the UPDATE joined the picked ids (`u.id IN (SELECT … LIMIT)`) as a semi join over all
 *     pending rows (a bitmap scan of jobs_due, 1,992 rows for one picked). `u.id = ANY (ARRAY(…))`
 *     evaluates the picks once and fetches them by primary key.
 *   - a key's oldest due jobs (`head`) and the keyless ones were read through jobs_due (state,
 *     run_at_us) and sorted: `kind = ANY (p_kinds)` takes the order out of
 *     jobs_kind_state_key_due, and the order's tie-break `id` was never in an index (a fan-out
 *     writes its jobs with one run_at_us, so a key's oldest hundreds tie). Now the heads are
 *     taken per (kind, key) with `kind =` one kind, from an index in exactly the claim's order:
 *     jobs_pending_claim (kind, fair_key, run_at_us, id) over pending jobs only. The ranking
 *     still merges a key's heads of every kind (PARTITION BY fair_key), so a key's `p_per_key`
 *     oldest due jobs over all kinds are among them.
 * Without statistics the planner still preferred full reads for the UPDATE and the keyless
 * heads (see the comments in the statement): the function runs with enable_seqscan off, like
 * plan_cache_mode a setting of the function alone.
 * The new index replaces jobs_kind_state_key_due here (the key walk reads it as well, and nothing
 * else on PostgreSQL read that one), so a job's writes keep the same number of index entries.
 * Lock, re-checks, ranking and result are unchanged.
 * SQLite: no-op. Its indexes end with the rowid (the id), so jobs_kind_state_key_due already has
 * the claim's order, and its claim (JobQueue.claimFair) is a statement of its own.
 */
export const fairClaimPlan: MigrationStep = async (db, dialect) => {
  if (dialect !== 'postgres') return;
  await sql`CREATE INDEX jobs_pending_claim ON jobs (kind, fair_key, run_at_us, id) WHERE state = 'pending'`.execute(db);
  await sql`DROP INDEX jobs_kind_state_key_due`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION claim_fair_jobs(p_kinds text[], p_worker text, p_limit integer, p_per_key integer, p_now bigint, p_lease bigint)
    RETURNS SETOF jobs
    LANGUAGE plpgsql VOLATILE
    SET plan_cache_mode = force_custom_plan
    SET enable_seqscan = off
    AS $fn$
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtext(current_schema() || ':jobs.fair-claim'));
      RETURN QUERY
        WITH RECURSIVE kinds AS MATERIALIZED (
          SELECT DISTINCT k.kind FROM unnest(p_kinds) AS k(kind)
        ),
        running AS MATERIALIZED (
          SELECT r.fair_key, COUNT(*) AS n FROM jobs r
          WHERE r.state = 'pending' AND r.kind = ANY (p_kinds) AND r.lease_until_us >= p_now
          GROUP BY r.fair_key
        ),
        -- Per kind, the next key above the last one: one probe of jobs_pending_claim each.
        walk AS (
          SELECT k.kind, (SELECT min(f.fair_key) FROM jobs f WHERE f.kind = k.kind AND f.state = 'pending') AS fair_key
          FROM kinds k
          UNION ALL
          SELECT w.kind, (SELECT min(f.fair_key) FROM jobs f WHERE f.kind = w.kind AND f.state = 'pending' AND f.fair_key > w.fair_key)
          FROM walk w WHERE w.fair_key IS NOT NULL
        ),
        -- Each (kind, key)'s and each kind's keyless p_per_key oldest due jobs. With one kind and
        -- key fixed, a range of jobs_pending_claim already in (run_at_us, id) order. The keyless
        -- ones (none in practice: deliveries and conversions carry a key) are read by
        -- fair_key IS NULL in that index and sorted; the ROW(…) order is the same order, but one
        -- that jobs_kind_state_due does not half-provide: without statistics the planner took
        -- that index for its run_at_us order and read every pending job of the kind.
        head AS MATERIALIZED (
          SELECT h.id, h.fair_key, h.run_at_us FROM walk w CROSS JOIN LATERAL (
            SELECT x.id AS id, x.fair_key AS fair_key, x.run_at_us AS run_at_us FROM jobs x
            WHERE x.state = 'pending' AND x.kind = w.kind AND x.fair_key = w.fair_key AND x.run_at_us <= p_now
              AND (x.lease_until_us IS NULL OR x.lease_until_us < p_now) AND x.attempts < x.max_attempts
            ORDER BY x.run_at_us, x.id LIMIT p_per_key
          ) AS h
          WHERE w.fair_key IS NOT NULL
          UNION ALL
          SELECT h.id, h.fair_key, h.run_at_us FROM kinds k CROSS JOIN LATERAL (
            SELECT j.id AS id, j.fair_key AS fair_key, j.run_at_us AS run_at_us FROM jobs j
            WHERE j.state = 'pending' AND j.kind = k.kind AND j.fair_key IS NULL AND j.run_at_us <= p_now
              AND (j.lease_until_us IS NULL OR j.lease_until_us < p_now) AND j.attempts < j.max_attempts
            ORDER BY ROW(j.run_at_us, j.id) LIMIT p_per_key
          ) AS h
        ),
        ranked AS MATERIALIZED (
          SELECT h.id AS id, h.run_at_us AS run_at_us,
            ROW_NUMBER() OVER (PARTITION BY h.fair_key ORDER BY h.run_at_us, h.id) + COALESCE(r.n, 0) AS slot
          FROM head h LEFT JOIN running r ON r.fair_key = h.fair_key
        )
        UPDATE jobs u SET locked_by = p_worker, lease_until_us = p_lease, attempts = u.attempts + 1
        -- ARRAY(…): the picks computed once, then fetched by primary key (an IN was a semi join
        -- over every pending row). Without statistics (a new table, autovacuum off) the planner
        -- guesses 10 picks and a rare state = 'pending', and preferred reading every pending row,
        -- through an index of the state or (a table of 2,000 jobs) sequentially. So the state's
        -- re-check is IS TRUE, a filter and no index condition, and the function runs with
        -- enable_seqscan off: every read here has an index made for it.
        WHERE u.id = ANY (ARRAY(SELECT rk.id FROM ranked rk WHERE rk.slot <= p_per_key ORDER BY rk.slot, rk.run_at_us LIMIT p_limit))
          AND (u.state = 'pending') IS TRUE AND (u.lease_until_us IS NULL OR u.lease_until_us < p_now)
        RETURNING u.*;
    END
    $fn$`.execute(db);
};
