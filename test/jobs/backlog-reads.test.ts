/**
 * Claims and completions with a burst's backlog pending: each finds the rows it writes by their id
 * instead of walking every pending job. Such a walk costs every delivery of a burst time that grows
 * with the backlog (on SQLite a separate `state = 'pending'` beside the ids made it read the
 * (state, run_at_us) index over every pending job: 0.3 ms a completion with 500 pending).
 * SQLite: the query plans of the statements the queue runs; PostgreSQL: the index entries and
 * sequential scans a completion reads on `jobs` (pg_stat_xact counters, as fair-claim-plan.test.ts).
 */
import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connect.js';
import { enqueueMany, JobQueue, type ClaimedJob } from '../../src/jobs/queue.js';
import { claimPostgres } from '../../src/jobs/queue/claim-postgres.js';
import { completeClaims } from '../../src/jobs/queue/outcome.js';
import { usingPostgres } from '../helpers/server.js';
import { recordingStatements, type RanStatement } from '../helpers/statement-record.js';
import { migratedStore, type TestStore } from '../helpers/store.js';

declare module '../../src/jobs/kinds.js' {
  interface JobPayloads {
    [testKind: `test.${string}`]: unknown;
  }
}

const BACKLOG = 2000;
const kind = 'test.backlog';
const other = 'test.backlog-other';

let store: TestStore;
let db: Db;
beforeAll(async () => {
  store = await migratedStore('backlog-reads');
  db = store.db;
  // A burst's backlog: deliveries of one project pending, and jobs of another kind beside them.
  const jobs = Array.from({ length: BACKLOG }, (_, i) => ({ kind: i % 4 === 0 ? other : kind, payload: i, fairKey: 'project:1', maxAttempts: 1000 }));
  for (let i = 0; i < jobs.length; i += 500) await enqueueMany(db.kysely, jobs.slice(i, i + 500));
});
afterAll(() => store?.close());

/** The queue over a handle that records every statement it runs (compiled, with its parameters). */
function recordingQueue(): { queue: JobQueue; ran: () => RanStatement[] } {
  const recording = recordingStatements(db);
  return { queue: new JobQueue(recording.db), ran: () => recording.take() };
}

/** SQLite's plan of a statement, one line per step. */
async function planOf(statement: RanStatement): Promise<string[]> {
  const r = await db.kysely.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${statement.sql}`, [...statement.parameters]));
  return r.rows.map((row) => row.detail);
}

/** A step that reads every pending job: a scan of `jobs`, or its (state, run_at_us) index by the state alone. */
const walksBacklog = (step: string): boolean => /^SCAN jobs\b/.test(step) || /INDEX jobs_due \(state=\?\)/.test(step);

/** The UPDATEs of `jobs` among the statements (claims and outcomes; not the periodic burial). */
const updatesOfJobs = (ran: readonly RanStatement[]): RanStatement[] => ran.filter((s) => /\bupdate "?jobs"? set\b/i.test(s.sql) && !s.sql.includes('"attempts" >= "max_attempts"'));

describe.skipIf(usingPostgres())(`with ${BACKLOG} jobs pending (SQLite plans)`, () => {
  it('a plain claim and the completion of its jobs find their rows by id', async () => {
    const { queue, ran } = recordingQueue();
    const claimed = await queue.claim('w-plain', { kinds: [kind], limit: 4, leaseMs: 60_000 });
    expect(claimed).toHaveLength(4);
    expect(await Promise.all(claimed.map((j) => queue.complete(j)))).toEqual([true, true, true, true]);
    const updates = updatesOfJobs(ran());
    expect(updates.length).toBeGreaterThanOrEqual(2);
    for (const u of updates) expect((await planOf(u)).filter(walksBacklog), u.sql).toEqual([]);
  });

  it('a fair claim and the completion of its jobs find their rows by id', async () => {
    const { queue, ran } = recordingQueue();
    const claimed: ClaimedJob[] = await queue.claim('w-fair', { kinds: [kind], limit: 8, leaseMs: 60_000, perKeyLimit: 8 });
    expect(claimed).toHaveLength(8);
    expect(await Promise.all(claimed.map((j) => queue.complete(j)))).toEqual(Array(8).fill(true));
    const updates = updatesOfJobs(ran());
    expect(updates.length).toBeGreaterThanOrEqual(2);
    for (const u of updates) expect((await planOf(u)).filter(walksBacklog), u.sql).toEqual([]);
  });

  // SQLite reads a bare bound LIMIT while planning, so it planned such a statement again on every
  // run: two thirds of the fair claim's time in a webhook burst.
  it('claims bind no bare LIMIT, so SQLite plans each of their statements once', async () => {
    const { queue, ran } = recordingQueue();
    expect(await queue.claim('w-limit', { kinds: [kind], limit: 2, leaseMs: 60_000 })).toHaveLength(2);
    expect(await queue.claim('w-limit', { kinds: [kind], limit: 3, leaseMs: 60_000, perKeyLimit: 16 })).toHaveLength(3);
    const claims = updatesOfJobs(ran());
    expect(claims).toHaveLength(2);
    for (const c of claims) expect(c.sql).not.toMatch(/\blimit\s+\?/i);
  });
});

interface Reads {
  seqScans: number;
  entriesRead: number;
}

/** This backend's reads on `jobs` not yet flushed to the statistics. */
async function jobsReads(c: Db['kysely']): Promise<Reads> {
  const r = await sql<{ seq: string; entries: string }>`
    SELECT pg_stat_get_xact_numscans('jobs'::regclass) AS seq,
      (SELECT COALESCE(SUM(pg_stat_get_xact_tuples_returned(i.indexrelid)), 0) FROM pg_index i WHERE i.indrelid = 'jobs'::regclass) AS entries`.execute(c);
  return { seqScans: Number(r.rows[0]!.seq), entriesRead: Number(r.rows[0]!.entries) };
}

describe.skipIf(!usingPostgres())(`with ${BACKLOG} jobs pending (PostgreSQL reads)`, () => {
  /** `run` in a transaction rolled back afterwards, with what it read on `jobs`. */
  async function readsOf<T>(run: (c: Db['kysely']) => Promise<T>): Promise<Reads & { result: T }> {
    return db.kysely.connection().execute(async (c) => {
      await sql`BEGIN`.execute(c);
      try {
        const before = await jobsReads(c);
        const result = await run(c);
        const after = await jobsReads(c);
        return { seqScans: after.seqScans - before.seqScans, entriesRead: after.entriesRead - before.entriesRead, result };
      } finally {
        await sql`ROLLBACK`.execute(c);
      }
    });
  }

  for (const statistics of [false, true]) {
    const label = statistics ? 'with statistics' : 'without statistics (a new table)';
    it(`a completion of 8 claims reads about their rows, ${label}`, async () => {
      if (statistics) await sql`ANALYZE jobs`.execute(db.kysely);
      const claimed = await new JobQueue(db).claim(`w-pg-${statistics}`, { kinds: [kind], limit: 8, leaseMs: 60_000 });
      expect(claimed).toHaveLength(8);
      // The completions of a batch, as the group commit runs them: one statement (completeClaims).
      const query = completeClaims.part!(db.kysely, claimed).query.toOperationNode() as RootOperationNode;
      const compiled = db.kysely.getExecutor().compileQuery(query, { queryId: 'completion' });
      const reads = await readsOf((c) => c.executeQuery(compiled));
      expect(reads.result.rows).toHaveLength(8);
      expect(reads.seqScans).toBe(0);
      expect(reads.entriesRead).toBeLessThan(100);
    });

    it(`a plain claim reads about the rows it takes, ${label}`, async () => {
      const now = Date.now() * 1000;
      const reads = await readsOf((c) => claimPostgres(c, 'w-pg-probe', [kind], 8, now, now + 60_000_000));
      expect(reads.result).toHaveLength(8);
      expect(reads.seqScans).toBe(0);
      expect(reads.entriesRead).toBeLessThan(100);
    });
  }
});
