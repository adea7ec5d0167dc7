/**
 * The fair claim with a webhook burst's backlog (migration 0024): on PostgreSQL claim_fair_jobs
 * reads index entries for about the rows it picks and the keys' heads, not every pending job
 * (its UPDATE was a semi join over all of them, its heads read through jobs_due), with and
 * without table statistics, and with statistics of a table of mostly done jobs, call after call; on both stores a fan-out's jobs, which share one run_at_us, are taken
 * oldest id first, and keyless jobs of two kinds share one limit.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connect.js';
import { enqueue, enqueueMany, JobQueue } from '../../src/jobs/queue.js';
import { usingPostgres } from '../helpers/server.js';
import { migratedStore, type TestStore } from '../helpers/store.js';

declare module '../../src/jobs/kinds.js' {
  interface JobPayloads {
    [testKind: `test.${string}`]: unknown;
  }
}

let store: TestStore;
let db: Db;
beforeAll(async () => {
  store = await migratedStore('fair-claim-plan');
  db = store.db;
});
afterAll(() => store?.close());

interface ClaimReads {
  claimed: number;
  seqScans: number;
  /** Index entries read on `jobs`, over all its indexes. */
  entriesRead: number;
  /** Index scans of jobs_pending_claim. */
  claimIndexScans: number;
}

interface JobsCounters {
  seqScans: number;
  entriesRead: number;
  claimIndexScans: number;
}

/** This backend's counters on `jobs` not yet flushed to the statistics (pg_stat_xact_*). */
async function jobsCounters(c: Db['kysely']): Promise<JobsCounters> {
  const r = await sql<{ seq: string; entries: string; claim_scans: string }>`
    SELECT pg_stat_get_xact_numscans('jobs'::regclass) AS seq,
      (SELECT COALESCE(SUM(pg_stat_get_xact_tuples_returned(i.indexrelid)), 0) FROM pg_index i WHERE i.indrelid = 'jobs'::regclass) AS entries,
      COALESCE(pg_stat_get_xact_numscans(to_regclass('jobs_pending_claim')), 0) AS claim_scans`.execute(c);
  const row = r.rows[0]!;
  return { seqScans: Number(row.seq), entriesRead: Number(row.entries), claimIndexScans: Number(row.claim_scans) };
}

/**
 * One claim_fair_jobs call in a transaction rolled back afterwards, with what it read on `jobs`:
 * the difference of the backend's counters (nested statements included) around it. A difference,
 * because those counters also hold earlier transactions' counts until the backend reports them.
 */
async function claimReads(kind: string, limit: number, perKey: number): Promise<ClaimReads> {
  return db.kysely.connection().execute(async (c) => {
    await sql`BEGIN`.execute(c);
    try {
      const before = await jobsCounters(c);
      const now = Date.now() * 1000;
      const got = await sql<{ id: number }>`SELECT id FROM claim_fair_jobs(${[kind]}::text[], 'probe', ${limit}, ${perKey}, ${now}, ${now + 60_000_000})`.execute(c);
      const after = await jobsCounters(c);
      return {
        claimed: got.rows.length,
        seqScans: after.seqScans - before.seqScans,
        entriesRead: after.entriesRead - before.entriesRead,
        claimIndexScans: after.claimIndexScans - before.claimIndexScans,
      };
    } finally {
      await sql`ROLLBACK`.execute(c);
    }
  });
}

describe.skipIf(!usingPostgres())('claim_fair_jobs with 2,000 due deliveries (PostgreSQL)', () => {
  const kind = 'test.fair-plan';
  beforeAll(async () => {
    const jobs = Array.from({ length: 2000 }, (_, i) => ({ kind, payload: i, fairKey: `project:${i % 3}`, maxAttempts: 1000 }));
    for (let i = 0; i < jobs.length; i += 500) await enqueueMany(db.kysely, jobs.slice(i, i + 500));
    // The burst's steady state: every key at its limit, one slot just freed.
    const q = new JobQueue(db);
    const running = await q.claim('w', { kinds: [kind], limit: 32, leaseMs: 60_000, perKeyLimit: 8 });
    expect(running).toHaveLength(24);
    expect(await q.complete(running[0]!)).toBe(true);
  });

  // Read before: about 2,000 entries for the heads and 2,000 for the UPDATE's join (or a seq scan).
  const expectNarrow = (r: ClaimReads): void => {
    expect(r.claimed).toBe(1);
    expect(r.seqScans).toBe(0);
    expect(r.claimIndexScans).toBeGreaterThan(0);
    // 24 running leases, the key walk, 3 heads of 8 after their 7-8 running jobs, the picked row.
    expect(r.entriesRead).toBeLessThan(150);
  };

  it('reads the picked row and the keys\' heads, without statistics (a new table)', async () => {
    expectNarrow(await claimReads(kind, 32, 8));
  });

  it('and with statistics', async () => {
    await sql`ANALYZE jobs`.execute(db.kysely);
    expectNarrow(await claimReads(kind, 32, 8));
  });

  // Late in a burst the statistics say pending jobs are rare; the function's plans are made once
  // per connection (migration 0030), so a plan that suits those statistics (reading every pending
  // job through jobs_due) would be kept for every later claim.
  it('and with statistics taken when most jobs are done, on every call of a connection', async () => {
    const now = Date.now() * 1000;
    await sql`INSERT INTO jobs (kind, payload, state, run_at_us, max_attempts, fair_key, created_us)
      SELECT ${kind}, 'null', 'done', ${now - 1_000_000}, 1000, 'project:' || (i % 3), ${now - 1_000_000} FROM generate_series(1, 20000) AS i`.execute(db.kysely);
    // Statistics taken while no job was pending (the burst's backlog parked meanwhile).
    await sql`UPDATE jobs SET state = 'parked' WHERE kind = ${kind} AND state = 'pending'`.execute(db.kysely);
    await sql`ANALYZE jobs`.execute(db.kysely);
    await sql`UPDATE jobs SET state = 'pending' WHERE kind = ${kind} AND state = 'parked'`.execute(db.kysely);
    for (let i = 0; i < 3; i++) expectNarrow(await claimReads(kind, 32, 8));
    await sql`DELETE FROM jobs WHERE kind = ${kind} AND state = 'done'`.execute(db.kysely);
  });
});

describe('fair claim order (both stores)', () => {
  it('a fan-out\'s jobs (one run_at_us) are taken oldest id first', async () => {
    const kind = 'test.fair-tie';
    await enqueueMany(db.kysely, Array.from({ length: 20 }, (_, i) => ({ kind, payload: i, fairKey: 'T' })));
    const got = await new JobQueue(db).claim('w', { kinds: [kind], limit: 10, leaseMs: 60_000, perKeyLimit: 3 });
    expect(got.map((j) => Number(j.payload)).sort((a, b) => a - b)).toEqual([0, 1, 2]);
  });

  it('keyless jobs of two kinds share one limit, oldest first', async () => {
    const [k1, k2] = ['test.fair-nokey-a', 'test.fair-nokey-b'];
    for (let i = 0; i < 3; i++) {
      await enqueue(db.kysely, { kind: k1, payload: `a${i}` });
      await enqueue(db.kysely, { kind: k2, payload: `b${i}` });
    }
    const got = await new JobQueue(db).claim('w', { kinds: [k1, k2], limit: 10, leaseMs: 60_000, perKeyLimit: 3 });
    expect(got.map((j) => j.payload).sort()).toEqual(['a0', 'a1', 'b0']);
  });
});
