/**
 * The durable queue against the real metadata store (SQLite file, or a PostgreSQL schema): several
 * independent connections claiming at once never share a job, leases are fenced and expire, a job
 * whose worker keeps dying ends dead, a running job's heartbeat keeps others off it, per-key
 * limits hold across connections, and workers pick jobs up when woken rather than at the next poll.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connect.js';
import type { KyselyPlugin, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { mergedWrite } from '../../src/db/group-commit.js';
import { enqueue, enqueueMany, enqueueMerged, JobQueue, type ClaimedJob, type OutcomeWrite } from '../../src/jobs/queue.js';
import { JobGiveUpError, Worker } from '../../src/jobs/worker.js';
import { listenForJobs } from '../../src/jobs/wake.js';
import { usingPostgres } from '../helpers/server.js';
import { migratedStore, type TestStore } from '../helpers/store.js';

// Kinds of these tests only, added to the typed table the way a feature's kind would be.
declare module '../../src/jobs/kinds.js' {
  interface JobPayloads {
    [testKind: `test.${string}`]: unknown;
  }
}

const log = pino({ level: 'silent' });
let store: TestStore;
let db: Db;
const connect = (): Promise<Db> => store.connect();
beforeAll(async () => {
  store = await migratedStore('jobs');
  db = store.db;
});
afterAll(() => store?.close());

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
    const queues = await Promise.all([0, 1, 2, 3].map(async () => new JobQueue(await connect())));
    const claimedBy = new Map<number, string>();
    const duplicates: number[] = [];
    await Promise.all(
      queues.map(async (q, w) => {
        for (let empty = 0; empty < 3; ) {
          const jobs = await q.claim(`w${w}`, { kinds: [kind], limit: 5, leaseMs: 60_000 });
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
    const a = new JobQueue(db);
    const b = new JobQueue(await connect());
    const [first] = await a.claim('A', { kinds: ['test.lease'], limit: 1, leaseMs: 300 });
    expect(first?.id).toBe(id);
    expect(await b.claim('B', { kinds: ['test.lease'], limit: 1, leaseMs: 300 })).toEqual([]);
    await sleep(400); // A "died": its lease ran out
    const [second] = await b.claim('B', { kinds: ['test.lease'], limit: 1, leaseMs: 60_000 });
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
    const q = new JobQueue(db);
    expect((await q.claim('A', { kinds: ['test.poison'], limit: 1, leaseMs: 50 })).map((j) => j.attempt)).toEqual([1]);
    await sleep(100);
    expect((await q.claim('A', { kinds: ['test.poison'], limit: 1, leaseMs: 50 })).map((j) => j.attempt)).toEqual([2]);
    await sleep(100);
    expect(await q.claim('A', { kinds: ['test.poison'], limit: 1, leaseMs: 50 })).toEqual([]);
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
        const w = new Worker(new JobQueue(await connect()), log, 50);
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
    const w = new Worker(new JobQueue(db), log, 30);
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

describe('fair claims (per-key limits)', () => {
  const kind = 'test.fair';
  const fair = (q: JobQueue, worker: string, limit: number) => q.claim(worker, { kinds: [kind], limit, leaseMs: 60_000, perKeyLimit: 2 });

  it('a key with a backlog gets at most its limit, over every connection, and the other keys get the rest', async () => {
    for (let i = 0; i < 30; i++) await enqueue(db.kysely, { kind, payload: `a${i}`, fairKey: 'A' });
    await enqueue(db.kysely, { kind, payload: 'b0', fairKey: 'B' });
    await enqueue(db.kysely, { kind, payload: 'c0', fairKey: 'C' });
    const q1 = new JobQueue(db);
    const q2 = new JobQueue(await connect());
    // The 30 A jobs are older, yet one claim takes the keys in turns.
    const first = await fair(q1, 'n1', 3);
    expect(first.map((j) => j.payload)).toEqual(['a0', 'b0', 'c0']);
    // Another node sees A's running job: one more A, not three.
    const second = await fair(q2, 'n2', 3);
    expect(second.map((j) => j.payload)).toEqual(['a1']);
    // A is saturated everywhere: free slots do not take more of it.
    expect(await fair(q1, 'n1', 10)).toEqual([]);
    expect(await fair(q2, 'n2', 10)).toEqual([]);
    // One A finishes: exactly one more may start.
    expect(await q1.complete(first[0]!)).toBe(true);
    expect((await fair(q2, 'n2', 10)).map((j) => j.payload)).toEqual(['a2']);
    // A failure retried later frees its slot too, and is not due yet.
    expect(await q2.fail(second[0]!, 'boom', 60_000)).toBe('retry');
    expect((await fair(q1, 'n1', 10)).map((j) => j.payload)).toEqual(['a3']);
  });

  it('a claim over two kinds takes each key in turn across both, up to its limit once', async () => {
    const [k1, k2] = ['test.fair-two-a', 'test.fair-two-b'];
    // Keys spread over both kinds (the claim walks each kind's keys), one shared by both.
    for (let i = 0; i < 3; i++) await enqueue(db.kysely, { kind: k1, payload: `s1-${i}`, fairKey: 'S' });
    for (let i = 0; i < 3; i++) await enqueue(db.kysely, { kind: k2, payload: `s2-${i}`, fairKey: 'S' });
    await enqueue(db.kysely, { kind: k1, payload: 'u0', fairKey: 'U' });
    await enqueue(db.kysely, { kind: k2, payload: 'v0', fairKey: 'V' });
    const q = new JobQueue(db);
    const got = await q.claim('w', { kinds: [k1, k2], limit: 10, leaseMs: 60_000, perKeyLimit: 2 });
    expect(got.map((j) => j.payload).sort()).toEqual(['s1-0', 's1-1', 'u0', 'v0']);
  });

  it('a key whose jobs lost their lease (dead worker) is not counted as running', async () => {
    const k = 'test.fair-expired';
    for (let i = 0; i < 3; i++) await enqueue(db.kysely, { kind: k, payload: i, fairKey: 'X' });
    const q = new JobQueue(db);
    expect(await q.claim('dies', { kinds: [k], limit: 5, leaseMs: 100, perKeyLimit: 2 })).toHaveLength(2);
    await sleep(200);
    const again = await q.claim('lives', { kinds: [k], limit: 5, leaseMs: 60_000, perKeyLimit: 2 });
    expect(again.map((j) => j.payload).sort()).toEqual([0, 1]);
  });
});

describe('fair claims: jobs without a key, and outcomes queued before a claim', () => {
  it('jobs of a fair kind without a key are ranked among themselves, up to the limit', async () => {
    const k = 'test.fair-keyless';
    for (let i = 0; i < 4; i++) await enqueue(db.kysely, { kind: k, payload: `n${i}` });
    await enqueue(db.kysely, { kind: k, payload: 'k0', fairKey: 'K' });
    const q = new JobQueue(db);
    const got = await q.claim('w', { kinds: [k], limit: 10, leaseMs: 60_000, perKeyLimit: 2 });
    expect(got.map((j) => j.payload).sort()).toEqual(['k0', 'n0', 'n1']);
  });

  it('a claim issued right after an outcome counts that slot as free (they share the group commit, outcome first)', async () => {
    const k = 'test.fair-handover';
    for (let i = 0; i < 3; i++) await enqueue(db.kysely, { kind: k, payload: i, fairKey: 'H' });
    const q = new JobQueue(db);
    const claim = () => q.claim('w', { kinds: [k], limit: 5, leaseMs: 60_000, perKeyLimit: 1 });
    const [first] = await claim();
    expect(first?.payload).toBe(0);
    // Not awaited: the worker frees the slot as soon as the outcome is queued.
    const completed = q.complete(first!);
    const next = await claim();
    expect(await completed).toBe(true);
    expect(next.map((j) => j.payload)).toEqual([1]);
  });
});

describe('outcome writes (JobOutcome.alongside)', () => {
  const k = 'test.alongside';
  const marks = (tag: string) => db.kysely.selectFrom('jobs').select('payload').where('kind', '=', `${k}.mark`).where('payload', '=', JSON.stringify(tag)).execute();
  // A marker row written by an outcome write; never due, so no claim takes it.
  const mark =
    (tag: string): OutcomeWrite =>
    async (trx) => {
      await enqueue(trx, { kind: `${k}.mark`, payload: tag, runAtUs: Number.MAX_SAFE_INTEGER });
    };

  it('commit with the completion and with a failure; a lost claim still writes them but records nothing', async () => {
    for (let i = 0; i < 3; i++) await enqueue(db.kysely, { kind: k, payload: i });
    const q = new JobQueue(db);
    const [a, b, c] = await q.claim('w', { kinds: [k], limit: 3, leaseMs: 60_000 });
    expect(await q.complete(a!, [mark('done-a')])).toBe(true);
    expect(await marks('done-a')).toHaveLength(1);
    expect((await row(a!.id)).state).toBe('done');
    expect(await q.fail(b!, 'boom', 60_000, false, [mark('failed-b')])).toBe('retry');
    expect(await marks('failed-b')).toHaveLength(1);
    expect((await row(b!.id)).last_error).toBe('boom');
    // Someone else's claim now: the outcome is fenced off, the attempt's own record still lands.
    await db.kysely.updateTable('jobs').set({ locked_by: 'other' }).where('id', '=', c!.id).execute();
    expect(await q.complete(c!, [mark('late-c')])).toBe(false);
    expect(await marks('late-c')).toHaveLength(1);
    expect((await row(c!.id)).state).toBe('pending');
  });

  it('a worker commits what a handler hands over, whether it succeeds or throws', async () => {
    const kind = `${k}.worker`;
    await enqueue(db.kysely, { kind, payload: 'ok' });
    await enqueue(db.kysely, { kind, payload: 'fail' });
    const w = new Worker(new JobQueue(db), log, 50);
    w.register(kind as 'test.x', {
      retryInMs: () => 60_000,
      run: async (payload, _job, outcome) => {
        outcome.alongside(mark(`ran-${String(payload)}`));
        if (payload === 'fail') throw new Error('handler failed');
      },
    });
    w.start();
    for (let i = 0; i < 100 && ((await marks('ran-ok')).length === 0 || (await marks('ran-fail')).length === 0); i++) await sleep(50);
    await w.stop();
    expect(await marks('ran-ok')).toHaveLength(1);
    expect(await marks('ran-fail')).toHaveLength(1);
    const states = await db.kysely.selectFrom('jobs').select(['payload', 'state', 'last_error']).where('kind', '=', kind).orderBy('id').execute();
    expect(states.map((r) => [r.state, r.last_error])).toEqual([
      ['done', null],
      ['pending', 'handler failed'],
    ]);
  });
});

/** The store handle `db` with every statement run through it counted by the kind of its query node. */
function countingDb(): { db: Db; count: (kind: 'UpdateQueryNode' | 'InsertQueryNode' | 'RawNode') => number } {
  const counts = new Map<string, number>();
  const plugin: KyselyPlugin = {
    transformQuery: ({ node }): RootOperationNode => {
      counts.set(node.kind, (counts.get(node.kind) ?? 0) + 1);
      return node;
    },
    transformResult: async ({ result }): Promise<QueryResult<UnknownRow>> => result,
  };
  return { db: { ...db, kysely: db.kysely.withPlugin(plugin) }, count: (kind) => counts.get(kind) ?? 0 };
}

describe('round trips (statements counted on the store handle)', () => {
  it('the completions of one group commit are one UPDATE, each answering for its own claim', async () => {
    const k = 'test.batch-complete';
    for (let i = 0; i < 6; i++) await enqueue(db.kysely, { kind: k, payload: i });
    const counted = countingDb();
    const q = new JobQueue(counted.db);
    const jobs = await q.claim('w', { kinds: [k], limit: 6, leaseMs: 60_000 });
    expect(jobs).toHaveLength(6);
    // One claim is someone else's by now: its completion is fenced off, the others' are not.
    await db.kysely.updateTable('jobs').set({ locked_by: 'other' }).where('id', '=', jobs[3]!.id).execute();
    // The completion is written as raw SQL: every statement counts, whatever its node.
    const statements = () => counted.count('UpdateQueryNode') + counted.count('RawNode');
    const before = statements();
    const results = await Promise.all(jobs.map((j) => q.complete(j)));
    expect(results).toEqual([true, true, true, false, true, true]);
    expect(statements() - before).toBe(1);
    const states = await Promise.all(jobs.map(async (j) => (await row(j.id)).state));
    expect(states).toEqual(['done', 'done', 'done', 'pending', 'done', 'done']);
    // A stale claim of a job (an earlier attempt) is told apart from the current one.
    expect(await q.complete({ ...jobs[0]!, attempt: jobs[0]!.attempt - 1 })).toBe(false);
  });

  it('a transaction enqueuing many jobs sends one NOTIFY per kind (PostgreSQL), and enqueueMany writes them in one INSERT', async () => {
    const counted = countingDb();
    await counted.db.kysely.transaction().execute(async (trx) => {
      for (let i = 0; i < 5; i++) await enqueue(trx, { kind: 'test.notify-a', payload: i, runAtUs: Number.MAX_SAFE_INTEGER - 1 });
      for (let i = 0; i < 5; i++) await enqueue(trx, { kind: 'test.notify-b', payload: i });
      await enqueue(trx, { kind: 'test.notify-a', payload: 'due' });
    });
    expect(counted.count('RawNode')).toBe(usingPostgres() ? 2 : 0);
    const inserts = counted.count('InsertQueryNode');
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ kind: 'test.many' as const, payload: i, uniqueKey: `many:${i}` }));
    await enqueueMany(counted.db.kysely, many(3));
    // Run again (a fan-out retried): the unique keys drop the repeats, the new one is written.
    await enqueueMany(counted.db.kysely, many(4));
    expect(counted.count('InsertQueryNode') - inserts).toBe(2);
    const rows = await db.kysely.selectFrom('jobs').select('payload').where('kind', '=', 'test.many').orderBy('id').execute();
    expect(rows.map((r) => r.payload)).toEqual(['0', '1', '2', '3']);
  });
});

describe('round trips: jobs written by outcomes', () => {
  it('the jobs that the outcomes of one group commit enqueue (enqueueMerged) are one INSERT', async () => {
    const k = 'test.fan-out';
    for (let i = 0; i < 4; i++) await enqueue(db.kysely, { kind: k, payload: i });
    const counted = countingDb();
    const q = new JobQueue(counted.db);
    const jobs = await q.claim('w', { kinds: [k], limit: 4, leaseMs: 60_000 });
    const inserts = counted.count('InsertQueryNode');
    const children = (j: { id: number }) => [1, 2].map((n) => ({ kind: `${k}.child` as const, payload: n, uniqueKey: `child:${j.id}:${n}` }));
    expect(await Promise.all(jobs.map((j) => q.complete(j, [mergedWrite(enqueueMerged, children(j))])))).toEqual([true, true, true, true]);
    expect(counted.count('InsertQueryNode') - inserts).toBe(1);
    const rows = await db.kysely.selectFrom('jobs').select('unique_key').where('kind', '=', `${k}.child`).execute();
    expect(rows).toHaveLength(8);
  });
});

describe('pick-up without waiting for a poll', () => {
  const POLL_MS = 60_000; // a job picked up within seconds was not found by the timer

  /**
   * A worker as app.ts makes one: on the process's own store handle (on SQLite one connection, so
   * a claim waits for an open transaction to end) and, on PostgreSQL, woken by LISTEN.
   */
  async function idleWorker(kinds: string[], runs: string[], opts: { concurrency?: number } = {}): Promise<Worker> {
    const w = new Worker(new JobQueue(db), log, POLL_MS);
    if (usingPostgres()) {
      const listener = listenForJobs(process.env['STOWAGE_DATABASE_URL']!, store.schema, () => w.poke(), log);
      const stop = w.stop.bind(w);
      w.stop = async () => {
        await listener.close();
        await stop();
      };
    }
    for (const kind of kinds) {
      w.register(kind as 'test.x', {
        ...(opts.concurrency ? { concurrency: opts.concurrency } : {}),
        run: async (payload) => {
          await sleep(20);
          runs.push(String(payload));
        },
      });
    }
    w.start();
    await sleep(300); // its first poll is over: from now on only a wake-up (or a minute) makes it look
    return w;
  }

  it('a job enqueued in this process runs at once, after its transaction commits', async () => {
    const runs: string[] = [];
    const w = await idleWorker(['test.wake'], runs);
    try {
      await db.kysely.transaction().execute(async (trx) => {
        await enqueue(trx, { kind: 'test.wake', payload: 'in-trx' });
        await sleep(300); // still uncommitted: nothing can run it yet
        expect(runs).toEqual([]);
      });
      for (let i = 0; i < 50 && runs.length === 0; i++) await sleep(100);
      expect(runs).toEqual(['in-trx']);
    } finally {
      await w.stop();
    }
  });

  it('a lane of its own keeps claiming while there is work (20 jobs, 2 slots, one poll a minute)', async () => {
    const runs: string[] = [];
    const w = await idleWorker(['test.lane', 'test.lane-other'], runs, { concurrency: 2 });
    try {
      await db.kysely.transaction().execute(async (trx) => {
        for (let i = 0; i < 20; i++) await enqueue(trx, { kind: 'test.lane', payload: `j${i}` });
      });
      for (let i = 0; i < 100 && runs.length < 20; i++) await sleep(100);
      expect(runs.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `j${i}`).sort());
    } finally {
      await w.stop();
    }
  });

  it('a lane wider than the per-key limit claims again only when a slot frees: no empty claim after each one that found work', async () => {
    /** The real queue, with the number of jobs each claim took noted. */
    class CountingQueue extends JobQueue {
      readonly taken: number[] = [];
      override async claim(...args: Parameters<JobQueue['claim']>): Promise<ClaimedJob[]> {
        const jobs = await super.claim(...args);
        this.taken.push(jobs.length);
        return jobs;
      }
    }
    const queue = new CountingQueue(db);
    const w = new Worker(queue, log, POLL_MS);
    const runs: string[] = [];
    w.register('test.keyed' as 'test.x', {
      concurrency: 8,
      perKeyLimit: 2,
      run: async (payload) => {
        await sleep(5);
        runs.push(String(payload));
      },
    });
    const jobs = 30;
    await enqueueMany(db.kysely, Array.from({ length: jobs }, (_, i) => ({ kind: 'test.keyed' as const, payload: `k${i}`, fairKey: 'one' })));
    w.start();
    try {
      for (let i = 0; i < 200 && runs.length < jobs; i++) await sleep(50);
      expect(runs).toHaveLength(jobs);
    } finally {
      await w.stop();
    }
    // The key's limit (2) holds the lane (8 slots) below full: a claim that found work must not be
    // followed at once by another, which could only find the key at its limit. Empty claims are
    // left for the last jobs' finishing (up to one per slot of the key) and a spare.
    const empty = queue.taken.filter((n) => n === 0).length;
    expect(queue.taken.reduce((a, n) => a + n, 0)).toBe(jobs);
    expect(empty).toBeLessThanOrEqual(3);
  });

  it.skipIf(!usingPostgres())('PostgreSQL: a job committed by another node wakes this one (LISTEN/NOTIFY)', async () => {
    const runs: string[] = [];
    const w = await idleWorker(['test.notify'], runs);
    try {
      const other = await connect(); // another node: its enqueue does not signal this process's workers
      await other.kysely.transaction().execute(async (trx) => {
        await enqueue(trx, { kind: 'test.notify', payload: 'from-elsewhere' });
      });
      for (let i = 0; i < 50 && runs.length === 0; i++) await sleep(100);
      expect(runs).toEqual(['from-elsewhere']);
    } finally {
      await w.stop();
    }
  });
});
