/**
 * The durable queue against the real metadata store (SQLite file, or a PostgreSQL schema): several
 * independent connections claiming at once never share a job, leases are fenced and expire, a job
 * whose worker keeps dying ends dead, and a running job's heartbeat keeps others off it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrations.js';
import { enqueue, JobQueue } from '../../src/jobs/queue.js';
import { JobGiveUpError, Worker } from '../../src/jobs/worker.js';
import { newSchema } from '../helpers/server.js';

const log = pino({ level: 'silent' });
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-jobs-'));
const schema = newSchema();
const dbs: Db[] = [];

async function connect(): Promise<Db> {
  const db = await openDb({ databaseUrl: process.env['STOWAGE_DATABASE_URL'] ?? '', dataDir, ...(schema ? { schema } : {}) });
  dbs.push(db);
  return db;
}

let db: Db;
beforeAll(async () => {
  db = await connect();
  await migrate(db);
});
afterAll(async () => {
  for (const d of dbs) await d.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const row = (id: number) => db.kysely.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
async function newJob(kind: string, maxAttempts = 10): Promise<number> {
  await enqueue(db.kysely, { kind, payload: { kind }, maxAttempts });
  const r = await db.kysely.selectFrom('jobs').select('id').where('kind', '=', kind).orderBy('id', 'desc').executeTakeFirstOrThrow();
  return Number(r.id);
}

describe('claiming', () => {
  it('four connections claiming at once take every job exactly once', async () => {
    const kind = 'test.race';
    for (let i = 0; i < 120; i++) await enqueue(db.kysely, { kind, payload: i });
    const queues = await Promise.all([0, 1, 2, 3].map(async () => new JobQueue((await connect()).kysely, db.dialect)));
    const claimedBy = new Map<number, string>();
    const duplicates: number[] = [];
    await Promise.all(
      queues.map(async (q, w) => {
        for (let empty = 0; empty < 3; ) {
          const jobs = await q.claim(`w${w}`, [kind], 5, 60_000);
          if (jobs.length === 0) {
            empty++;
            continue;
          }
          for (const j of jobs) {
            if (claimedBy.has(j.id)) duplicates.push(j.id);
            claimedBy.set(j.id, `w${w}`);
            expect(await q.complete(j)).toBe(true);
          }
        }
      }),
    );
    expect(duplicates).toEqual([]);
    expect(claimedBy.size).toBe(120);
    const left = await db.kysely.selectFrom('jobs').select('id').where('kind', '=', kind).where('state', '!=', 'done').execute();
    expect(left).toEqual([]);
  });

  it('a lease is exclusive until it expires, and the old holder is fenced off afterwards', async () => {
    const id = await newJob('test.lease');
    const a = new JobQueue(db.kysely, db.dialect);
    const b = new JobQueue((await connect()).kysely, db.dialect);
    const [first] = await a.claim('A', ['test.lease'], 1, 300);
    expect(first?.id).toBe(id);
    expect(await b.claim('B', ['test.lease'], 1, 300)).toEqual([]);
    await sleep(400); // A "died": its lease ran out
    const [second] = await b.claim('B', ['test.lease'], 1, 60_000);
    expect(second).toMatchObject({ id, attempt: 2, lockedBy: 'B' });
    expect(await a.complete(first!)).toBe(false);
    expect(await a.fail(first!, 'late', 0)).toBe('lost');
    expect(await a.extend(first!, 60_000)).toBe(false);
    expect((await row(id)).state).toBe('pending');
    expect(await b.complete(second!)).toBe(true);
    expect((await row(id)).state).toBe('done');
  });

  it('a job whose worker died on its last attempt is dead, not run again', async () => {
    const id = await newJob('test.poison', 2);
    const q = new JobQueue(db.kysely, db.dialect);
    expect((await q.claim('A', ['test.poison'], 1, 50)).map((j) => j.attempt)).toEqual([1]);
    await sleep(100);
    expect((await q.claim('A', ['test.poison'], 1, 50)).map((j) => j.attempt)).toEqual([2]);
    await sleep(100);
    expect(await q.claim('A', ['test.poison'], 1, 50)).toEqual([]);
    const r = await row(id);
    expect(r.state).toBe('dead');
    expect(r.last_error).toContain('lease expired');
  });

  it('unique keys drop a second enqueue', async () => {
    await enqueue(db.kysely, { kind: 'test.unique', payload: 1, uniqueKey: 'only-once' });
    await enqueue(db.kysely, { kind: 'test.unique', payload: 2, uniqueKey: 'only-once' });
    const rows = await db.kysely.selectFrom('jobs').select('payload').where('kind', '=', 'test.unique').execute();
    expect(rows.map((r) => r.payload)).toEqual(['1']);
  });
});

describe('workers', () => {
  it('the heartbeat keeps a job longer than its lease to one worker', async () => {
    const kind = 'test.slow';
    const id = await newJob(kind);
    const runs: string[] = [];
    const workers = await Promise.all(
      ['A', 'B'].map(async (name) => {
        const w = new Worker(new JobQueue((await connect()).kysely, db.dialect), log, 50);
        w.register(kind, {
          leaseMs: 300,
          run: async () => {
            runs.push(name);
            await sleep(1500); // five leases long
          },
        });
        w.start();
        return w;
      }),
    );
    for (let i = 0; i < 60 && (await row(id)).state !== 'done'; i++) await sleep(100);
    await Promise.all(workers.map((w) => w.stop()));
    expect(runs).toHaveLength(1);
    expect(await row(id)).toMatchObject({ state: 'done', attempts: 1 });
  });

  it('retries with backoff, and JobGiveUpError ends a job at once', async () => {
    const flaky = await newJob('test.flaky', 5);
    const hopeless = await newJob('test.hopeless', 5);
    const w = new Worker(new JobQueue(db.kysely, db.dialect), log, 30);
    let flakyRuns = 0;
    w.register('test.flaky', {
      retryInMs: () => 20,
      run: async () => {
        if (++flakyRuns < 3) throw new Error(`flaky ${flakyRuns}`);
      },
    });
    w.register('test.hopeless', {
      run: async () => {
        throw new JobGiveUpError('no point');
      },
    });
    w.start();
    for (let i = 0; i < 100 && ((await row(flaky)).state === 'pending' || (await row(hopeless)).state === 'pending'); i++) await sleep(50);
    await w.stop();
    expect(await row(flaky)).toMatchObject({ state: 'done', attempts: 3 });
    expect(await row(hopeless)).toMatchObject({ state: 'dead', attempts: 1, last_error: 'no point' });
  });
});
