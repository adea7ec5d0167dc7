import { sql } from 'kysely';
import type { MigrationStep } from './types.js';

/**
 * PostgreSQL: a fair claim (jobs/queue.ts, JobQueue.claimFair) in one round trip. The claim must
 * hold an advisory lock while it counts the running jobs per key and takes rows (two nodes counting
 * at once could both fill a key to its limit), and its UPDATE must see the rows the previous lock
 * holder committed. Sent from the client that was BEGIN, the lock, the UPDATE and COMMIT: four round
 * trips for every freed slot of a webhook burst. In a function each statement takes a fresh
 * snapshot (READ COMMITTED, VOLATILE), so the UPDATE after the lock sees what the lock waited for,
 * and in autocommit the lock is released with the call's own transaction.
 *
 * The statement is the one claimFair wrote, with the kinds as an array and the values as
 * parameters, but for the keys with pending jobs: `SELECT DISTINCT fair_key` read every pending
 * job of the kinds on every claim (a sequential scan of a burst's whole backlog, 7 ms a claim with
 * 2,000 deliveries pending, and the claims of a node follow one another). The keys are walked
 * instead, one probe of jobs_kind_state_key_due per key and kind (a loose index scan). Table names resolve through the caller's search_path, as the client's statements do.
 * `plan_cache_mode = force_custom_plan`: PL/pgSQL would otherwise settle on a generic plan after a
 * few calls, planned without the per-key limit and time, where the client's statements were
 * planned with their values every time. SQLite claims with its own statements (one writer: no lock needed).
 */
export const fairClaimFunction: MigrationStep = async (db, dialect) => {
  if (dialect !== 'postgres') return;
  await sql`
    CREATE FUNCTION claim_fair_jobs(p_kinds text[], p_worker text, p_limit integer, p_per_key integer, p_now bigint, p_lease bigint)
    RETURNS SETOF jobs
    LANGUAGE plpgsql VOLATILE
    SET plan_cache_mode = force_custom_plan
    AS $fn$
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtext(current_schema() || ':jobs.fair-claim'));
      RETURN QUERY
        WITH running AS MATERIALIZED (
          SELECT r.fair_key, COUNT(*) AS n FROM jobs r
          WHERE r.state = 'pending' AND r.kind = ANY (p_kinds) AND r.lease_until_us >= p_now
          GROUP BY r.fair_key
        ),
        fair_keys AS MATERIALIZED (
          WITH RECURSIVE walk AS (
            SELECT k.kind, (SELECT min(f.fair_key) FROM jobs f WHERE f.kind = k.kind AND f.state = 'pending') AS fair_key
            FROM unnest(p_kinds) AS k(kind)
            UNION ALL
            SELECT w.kind, (SELECT min(f.fair_key) FROM jobs f WHERE f.kind = w.kind AND f.state = 'pending' AND f.fair_key > w.fair_key)
            FROM walk w WHERE w.fair_key IS NOT NULL
          )
          SELECT DISTINCT walk.fair_key FROM walk WHERE walk.fair_key IS NOT NULL
        ),
        head AS MATERIALIZED (
          SELECT h.id, h.fair_key, h.run_at_us FROM fair_keys k CROSS JOIN LATERAL (
            SELECT x.id AS id, x.fair_key AS fair_key, x.run_at_us AS run_at_us FROM jobs x
            WHERE x.state = 'pending' AND x.kind = ANY (p_kinds) AND x.run_at_us <= p_now
              AND (x.lease_until_us IS NULL OR x.lease_until_us < p_now) AND x.attempts < x.max_attempts
              AND x.fair_key = k.fair_key
            ORDER BY x.run_at_us, x.id LIMIT p_per_key
          ) AS h
          UNION ALL
          SELECT * FROM (
            SELECT j.id AS id, j.fair_key AS fair_key, j.run_at_us AS run_at_us FROM jobs j
            WHERE j.state = 'pending' AND j.kind = ANY (p_kinds) AND j.run_at_us <= p_now
              AND (j.lease_until_us IS NULL OR j.lease_until_us < p_now) AND j.attempts < j.max_attempts
              AND j.fair_key IS NULL
            ORDER BY j.run_at_us, j.id LIMIT p_per_key
          ) AS keyless
        ),
        ranked AS MATERIALIZED (
          SELECT h.id AS id, h.run_at_us AS run_at_us,
            ROW_NUMBER() OVER (PARTITION BY h.fair_key ORDER BY h.run_at_us, h.id) + COALESCE(r.n, 0) AS slot
          FROM head h LEFT JOIN running r ON r.fair_key = h.fair_key
        )
        UPDATE jobs u SET locked_by = p_worker, lease_until_us = p_lease, attempts = u.attempts + 1
        WHERE u.id IN (SELECT rk.id FROM ranked rk WHERE rk.slot <= p_per_key ORDER BY rk.slot, rk.run_at_us LIMIT p_limit)
          AND u.state = 'pending' AND (u.lease_until_us IS NULL OR u.lease_until_us < p_now)
        RETURNING u.*;
    END
    $fn$`.execute(db);
};
