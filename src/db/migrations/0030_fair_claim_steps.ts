import { sql } from 'kysely';
import type { MigrationStep } from './types.js';

/**
 * PostgreSQL: claim_fair_jobs (0021, 0024) as small statements whose plans are made once per
 * connection, instead of one statement planned again on every call. With custom plans
 * (plan_cache_mode = force_custom_plan) planning the one statement of CTEs, a recursive walk and
 * LATERAL joins took 3.5-6.6 ms a call against 0.7 ms of execution, on the path of every freed
 * webhook slot; its generic plan was a bad one (67-85 ms). Each statement here reads one index for
 * one purpose, so its generic plan is the custom one, and PL/pgSQL keeps it for the connection:
 *   - the running jobs per key (jobs_leased);
 *   - per kind, the keys with pending jobs, walked one probe at a time (jobs_pending_claim);
 *   - per (kind, key) with room, its oldest due jobs up to the room left (jobs_pending_claim, in
 *     the claim's order), and per kind the keyless ones;
 *   - the ranking of those heads (arrays only, no table);
 *   - the UPDATE of the picked ids by primary key.
 * What it claims is unchanged: under the advisory lock, a key's running jobs plus its jobs taken
 * never exceed p_per_key, keys are taken in turns (lowest slot first, oldest first within a slot),
 * a key's heads of every kind are ranked together, keyless jobs share one limit without counting
 * the running ones, and the UPDATE re-checks each row.
 * A generic plan is made from whatever statistics the table has when the connection first calls:
 * taken late in a burst, they say pending jobs are rare, and the heads and the key walk were then
 * planned as a read of every pending job through jobs_due (state, run_at_us) and a sort, kept for
 * the connection's every later claim. Each statement's ORDER BY / GROUP BY is therefore exactly
 * its index's column order, and sorts and hash aggregates are off (as sequential scans, see
 * 0024): only the claim indexes answer without one. JIT is off: the disabled paths' costs would
 * otherwise exceed jit_above_cost and compile every statement (about 200 ms each).
 * In psql, 2,000 jobs of three keys with 24 running: 0.31-0.38 ms a call, with or without
 * statistics, against 1.05-1.4 ms for 0024's statement.
 * SQLite: no-op (its claim is a statement of its own, jobs/queue/claim-sqlite.ts).
 */
export const fairClaimSteps: MigrationStep = async (db, dialect) => {
  if (dialect !== 'postgres') return;
  await sql`
    CREATE OR REPLACE FUNCTION claim_fair_jobs(p_kinds text[], p_worker text, p_limit integer, p_per_key integer, p_now bigint, p_lease bigint)
    RETURNS SETOF jobs
    LANGUAGE plpgsql VOLATILE
    SET plan_cache_mode = force_generic_plan
    SET enable_seqscan = off
    SET enable_sort = off
    SET enable_hashagg = off
    SET jit = off
    AS $fn$
    DECLARE
      v_running_keys text[] := '{}';
      v_running_n bigint[] := '{}';
      v_kinds text[];
      v_kind text;
      v_key text;
      v_room integer;
      v_ids bigint[] := '{}';
      v_keys text[] := '{}';
      v_runs bigint[] := '{}';
      v_pick bigint[];
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtext(current_schema() || ':jobs.fair-claim'));
      v_kinds := ARRAY(SELECT DISTINCT k FROM unnest(p_kinds) AS k);
      FOREACH v_kind IN ARRAY v_kinds LOOP
        SELECT v_running_keys || COALESCE(array_agg(r.fair_key), '{}'), v_running_n || COALESCE(array_agg(r.n), '{}') INTO v_running_keys, v_running_n
          FROM (SELECT j.fair_key, COUNT(*) AS n FROM jobs j
                WHERE j.kind = v_kind AND j.state = 'pending' AND j.fair_key IS NOT NULL AND j.lease_until_us >= p_now
                GROUP BY j.kind, j.state, j.fair_key) AS r;
      END LOOP;
      IF cardinality(v_kinds) > 1 THEN
        SELECT COALESCE(array_agg(r.k), '{}'), COALESCE(array_agg(r.n), '{}') INTO v_running_keys, v_running_n
          FROM (SELECT c.k, SUM(c.n)::bigint AS n FROM unnest(v_running_keys, v_running_n) AS c(k, n) GROUP BY c.k) AS r;
      END IF;
      FOREACH v_kind IN ARRAY v_kinds LOOP
        v_key := NULL;
        LOOP
          IF v_key IS NULL THEN
            SELECT f.fair_key INTO v_key FROM jobs f WHERE f.kind = v_kind AND f.state = 'pending' AND f.fair_key IS NOT NULL
              ORDER BY f.kind, f.fair_key LIMIT 1;
          ELSE
            SELECT f.fair_key INTO v_key FROM jobs f WHERE f.kind = v_kind AND f.state = 'pending' AND f.fair_key > v_key
              ORDER BY f.kind, f.fair_key LIMIT 1;
          END IF;
          EXIT WHEN v_key IS NULL;
          v_room := p_per_key - COALESCE(v_running_n[array_position(v_running_keys, v_key)], 0);
          CONTINUE WHEN v_room <= 0;
          SELECT v_ids || COALESCE(array_agg(h.id), '{}'), v_keys || COALESCE(array_agg(h.fair_key), '{}'), v_runs || COALESCE(array_agg(h.run_at_us), '{}')
            INTO v_ids, v_keys, v_runs
            FROM (SELECT x.id, x.fair_key, x.run_at_us FROM jobs x
                  WHERE x.state = 'pending' AND x.kind = v_kind AND x.fair_key = v_key AND x.run_at_us <= p_now
                    AND (x.lease_until_us IS NULL OR x.lease_until_us < p_now) AND x.attempts < x.max_attempts
                  ORDER BY x.kind, x.fair_key, x.run_at_us, x.id LIMIT v_room) AS h;
        END LOOP;
        SELECT v_ids || COALESCE(array_agg(h.id), '{}'), v_keys || COALESCE(array_agg(h.fair_key), '{}'), v_runs || COALESCE(array_agg(h.run_at_us), '{}')
          INTO v_ids, v_keys, v_runs
          FROM (SELECT x.id, x.fair_key, x.run_at_us FROM jobs x
                WHERE x.state = 'pending' AND x.kind = v_kind AND x.fair_key IS NULL AND x.run_at_us <= p_now
                  AND (x.lease_until_us IS NULL OR x.lease_until_us < p_now) AND x.attempts < x.max_attempts
                ORDER BY x.kind, x.fair_key, x.run_at_us, x.id LIMIT p_per_key) AS h;
      END LOOP;
      IF cardinality(v_ids) = 0 THEN
        RETURN;
      END IF;
      -- A key's heads of every kind ranked together after its running jobs (keyless: the NULL
      -- key, never running), lowest slot first: the keys in turns.
      SELECT array_agg(rk.id) INTO v_pick FROM (
        SELECT h.id FROM (
          SELECT c.id, c.run_at_us,
            ROW_NUMBER() OVER (PARTITION BY c.fair_key ORDER BY c.run_at_us, c.id)
              + COALESCE(v_running_n[array_position(v_running_keys, c.fair_key)], 0) AS slot
          FROM unnest(v_ids, v_keys, v_runs) AS c(id, fair_key, run_at_us)
        ) AS h
        WHERE h.slot <= p_per_key
        ORDER BY h.slot, h.run_at_us, h.id
        LIMIT p_limit
      ) AS rk;
      RETURN QUERY
        UPDATE jobs u SET locked_by = p_worker, lease_until_us = p_lease, attempts = u.attempts + 1
        WHERE u.id = ANY (v_pick)
          AND (u.state = 'pending') IS TRUE AND (u.lease_until_us IS NULL OR u.lease_until_us < p_now)
        RETURNING u.*;
    END
    $fn$`.execute(db);
};
