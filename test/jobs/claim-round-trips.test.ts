/**
 * Fair claims against the real store: round trips to PostgreSQL counted on the client (BEGIN and
 * COMMIT included, which no Kysely plugin sees), and the per-key limit held when several
 * connections claim the same key at the same moment. (That test passes without the advisory lock
 * too: with one key, a claim whose snapshot is stale picks the rows it thinks are next, and the
 * ones another claim took fail its re-check. The lock guards rarer interleavings, such as a row
 * that fell due between the two claims' clocks.)
 */
import { CompiledQuery, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connect.js';
import { mergedWrite } from '../../src/db/group-commit.js';
import { enqueueCombinable, enqueueMany, JobQueue, type ClaimOptions } from '../../src/jobs/queue.js';
import { ProjectRepo } from '../../src/projects/repo.js';
import { insertDeliveries, WebhookRepo, type NewDelivery } from '../../src/webhooks/repo.js';
import { SubscriptionReads } from '../../src/webhooks/subscription-reads.js';
import { usingPostgres } from '../helpers/server.js';
import { migratedStore, type TestStore } from '../helpers/store.js';

declare module '../../src/jobs/kinds.js' {
  interface JobPayloads {
    [testKind: `test.${string}`]: unknown;
  }
}

let store: TestStore;
let db: Db;
const connect = (): Promise<Db> => store.connect();
beforeAll(async () => {
  store = await migratedStore('claims');
  db = store.db;
});
afterAll(() => store?.close());

interface Sent {
  /** The statement's first word, upper case. */
  word: string;
  text: string;
  values: unknown[];
}

/**
 * Runs `fn` counting every statement the pg client sends meanwhile (each one a round trip), by
 * first word. Left out: the burial of jobs out of attempts, which a queue runs at most once a
 * second per set of kinds (JobQueue.buryAbandoned), not per claim.
 */
async function roundTrips<T>(fn: () => Promise<T>): Promise<{ result: T; statements: string[]; sent: Sent[] }> {
  const sent: Sent[] = [];
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0];
    const text = typeof first === 'string' ? first : (first as { text?: string } | undefined)?.text;
    const values = Array.isArray(args[1]) ? (args[1] as unknown[]) : [];
    if (text && !text.includes('>= "max_attempts"')) sent.push({ word: text.trim().split(/\s+/)[0]!.toUpperCase(), text, values });
    return original.apply(this, args);
  };
  try {
    const result = await fn();
    return { result, statements: sent.map((s) => s.word), sent };
  } finally {
    proto.query = original;
  }
}

/**
 * The synchronous_commit setting a statement leaves for the rest of its transaction (what its
 * commit will do): the statement replayed in a transaction that is rolled back, its claim with it.
 */
async function commitModeAfter(statement: Sent): Promise<string> {
  return db.kysely.connection().execute(async (c) => {
    await sql`BEGIN`.execute(c);
    try {
      await c.executeQuery(CompiledQuery.raw(statement.text, statement.values));
      return (await sql<{ mode: string }>`SELECT current_setting('synchronous_commit') AS mode`.execute(c)).rows[0]!.mode;
    } finally {
      await sql`ROLLBACK`.execute(c);
    }
  });
}

/** A delivery's attempt record, as the delivery handler hands it to its outcome. */
const attemptOf = (eventId: number, attempt: number): NewDelivery => ({
  webhookId: 9_000_001, projectId: 1, event: 'file.stored', eventId, attempt, targetUrl: 'http://127.0.0.1/h',
  startedUs: 1, durationMs: 1, status: 200, success: true, error: null, responseExcerpt: 'ok',
});
const recordsOf = async (eventIds: number[]) =>
  (await db.kysely.selectFrom('webhook_deliveries').select(['event_id', 'attempt']).where('webhook_id', '=', 9_000_001).where('event_id', 'in', eventIds).orderBy('event_id').execute()).map((r) => [Number(r.event_id), Number(r.attempt)]);

const jobs = (kind: string, key: string, n: number) => Array.from({ length: n }, (_, i) => ({ kind: kind as `test.${string}`, payload: i, fairKey: key }));

describe.skipIf(!usingPostgres())('PostgreSQL fair claims: round trips', () => {
  it('a lone fair claim is one round trip (lock and claim in one call)', async () => {
    const kind = 'test.rt-lone';
    await enqueueMany(db.kysely, jobs(kind, 'P', 5));
    const q = new JobQueue(db);
    const { result, statements } = await roundTrips(() => q.claim('w', { kinds: [kind], limit: 3, leaseMs: 60_000, perKeyLimit: 2 }));
    expect(result.map((j) => j.payload)).toEqual([0, 1]);
    expect(statements).toEqual(['SELECT']);
  });

  it("a claim committing on its own does not wait for the WAL flush; inside the outcomes' transaction it leaves their commit durable", async () => {
    const kind = 'test.rt-unsynced';
    // Eight due, four per claim: the replay (rolled back) has jobs left to claim.
    await enqueueMany(db.kysely, jobs(kind, 'U', 8));
    const q = new JobQueue(db);
    const opts: ClaimOptions = { kinds: [kind], limit: 4, leaseMs: 60_000, perKeyLimit: 8 };
    const lone = await roundTrips(() => q.claim('w', opts));
    expect(lone.result).toHaveLength(4);
    expect(await commitModeAfter(lone.sent[0]!)).toBe('off');
    // A failure with a write of its own (not combinable) shares a transaction with the claim queued
    // behind it: that claim must not make the failure's commit asynchronous.
    const [job] = lone.result;
    let modeInOutcome = '';
    const shared = await roundTrips(async () => {
      const failed = q.fail(job!, 'boom', 60_000, false, [async (trx) => void (modeInOutcome = (await sql<{ m: string }>`SELECT current_setting('synchronous_commit') AS m`.execute(trx)).rows[0]!.m)]);
      const next = await q.claim('w', opts);
      expect(await failed).toBe('retry');
      return next;
    });
    expect(shared.statements).toEqual(['BEGIN', 'SELECT', 'UPDATE', 'SELECT', 'COMMIT']);
    expect(modeInOutcome).toBe('on');
    expect(await commitModeAfter(shared.sent[3]!)).toBe('on');
  });

  it("a claim with a read hands each job the row its payload names, read by the claim's one statement", async () => {
    const kind = 'test.rt-read';
    const project = await new ProjectRepo(db).insert({ name: 'rt-read', pubKey: 'pub-rt-read', autostore: true, signedUploads: false, createdUs: 1 }, 'secret-rt-read');
    const sub = await new WebhookRepo(db).insert({ projectId: project.id, event: 'file.stored', targetUrl: 'http://127.0.0.1/rt-read', isActive: true, signingSecret: 's3cret', version: '0.7', createdUs: 5, updatedUs: 6 });
    await enqueueMany(db.kysely, [sub.id, 987_654_321].map((subscriptionId, i) => ({ kind: kind as `test.${string}`, payload: { subscriptionId, i }, fairKey: 'W' })));
    const q = new JobQueue(db);
    const { result, statements } = await roundTrips(() => q.claim('w', { kinds: [kind], limit: 2, leaseMs: 60_000, perKeyLimit: 2, read: { table: 'webhooks', idField: 'subscriptionId' } }));
    expect(statements).toEqual(['SELECT']);
    const [found, missing] = result;
    expect(missing!.readRow).toBeNull();
    expect(new SubscriptionReads(new WebhookRepo(db)).claimed(project.id, found!.readRow ?? null)).toEqual(sub);
    // Another project's subscription is as good as a missing one.
    expect(new SubscriptionReads(new WebhookRepo(db)).claimed(project.id + 1, found!.readRow ?? null)).toBeNull();
  });

  it('a claim queued behind completions runs after them, each one statement without BEGIN/COMMIT', async () => {
    const kind = 'test.rt-batch';
    await enqueueMany(db.kysely, jobs(kind, 'Q', 6));
    const q = new JobQueue(db);
    const opts: ClaimOptions = { kinds: [kind], limit: 3, leaseMs: 60_000, perKeyLimit: 3 };
    const first = await q.claim('w', opts);
    expect(first).toHaveLength(3);
    const { result, statements } = await roundTrips(async () => {
      const done = first.map((j) => q.complete(j));
      const next = await q.claim('w', opts);
      expect(await Promise.all(done)).toEqual([true, true, true]);
      return next;
    });
    expect(result.map((j) => j.payload)).toEqual([3, 4, 5]);
    // The completions' one UPDATE, then the claim, which sees them: was BEGIN, UPDATE, SELECT, COMMIT.
    expect(statements).toEqual(['UPDATE', 'SELECT']);
  });

  it('a claim queued before outcomes runs first, and the outcomes after it, without BEGIN/COMMIT', async () => {
    const kind = 'test.rt-claim-first';
    await enqueueMany(db.kysely, jobs(kind, 'V', 6));
    const q = new JobQueue(db);
    const opts: ClaimOptions = { kinds: [kind], limit: 3, leaseMs: 60_000, perKeyLimit: 6 };
    const first = await q.claim('w', opts);
    expect(first).toHaveLength(3);
    const { result, statements } = await roundTrips(async () => {
      // Queued in the turn after the claim's: one batch, the claim first (as when a freed slot's
      // claim is queued while the group commit is busy, and outcomes arrive behind it).
      let done: Promise<boolean[]> | null = null;
      setImmediate(() => (done = Promise.all(first.map((j) => q.complete(j, [mergedWrite(insertDeliveries, attemptOf(j.id, j.attempt))])))));
      const next = await q.claim('w', opts);
      expect(await done).toEqual([true, true, true]);
      return next;
    });
    expect(result.map((j) => j.payload)).toEqual([3, 4, 5]);
    // Was BEGIN, the claim, the outcomes' WITH, COMMIT.
    expect(statements).toEqual(['SELECT', 'WITH']);
    expect(await recordsOf(first.map((j) => j.id))).toEqual(first.map((j) => [j.id, 1]));
  });

  it("deliveries' outcomes committing on their own (attempt records and completions) are one statement", async () => {
    const kind = 'test.rt-outcomes';
    await enqueueMany(db.kysely, jobs(kind, 'S', 3));
    const q = new JobQueue(db);
    const claimed = await q.claim('w', { kinds: [kind], limit: 3, leaseMs: 60_000, perKeyLimit: 3 });
    expect(claimed).toHaveLength(3);
    const { result, statements } = await roundTrips(() => Promise.all(claimed.map((j) => q.complete(j, [mergedWrite(insertDeliveries, attemptOf(j.id, j.attempt))]))));
    expect(result).toEqual([true, true, true]);
    // Was BEGIN, INSERT, UPDATE, COMMIT: one data-modifying statement, atomic on its own.
    expect(statements).toEqual(['WITH']);
    expect(await recordsOf(claimed.map((j) => j.id))).toEqual(claimed.map((j) => [j.id, 1]));
  });

  it("fan-outs' outcomes (the jobs they write, their NOTIFY and their completions) are one statement", async () => {
    const kind = 'test.rt-fanout';
    const child = 'test.rt-fanout-child';
    await enqueueMany(db.kysely, jobs(kind, 'F', 2));
    const q = new JobQueue(db);
    const claimed = await q.claim('w', { kinds: [kind], limit: 2, leaseMs: 60_000 });
    expect(claimed).toHaveLength(2);
    // A repeat (a fan-out run again after a crash) is dropped by its unique key, the rest written.
    await enqueueMany(db.kysely, [{ kind: child as `test.${string}`, payload: 'earlier', uniqueKey: `rt-fanout:${claimed[0]!.id}:a` }]);
    const listener = new pg.Client({ connectionString: process.env.STOWAGE_DATABASE_URL });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (m) => heard.push(m.payload ?? ''));
    await listener.query('LISTEN stowage_jobs');
    try {
      const childrenOf = (j: { id: number }) => ['a', 'b'].map((s) => ({ kind: child as `test.${string}`, payload: `${j.id}${s}`, uniqueKey: `rt-fanout:${j.id}:${s}` }));
      const { result, statements } = await roundTrips(() => Promise.all(claimed.map((j) => q.complete(j, [mergedWrite(enqueueCombinable, childrenOf(j))]))));
      expect(result).toEqual([true, true]);
      // Was BEGIN, INSERT, SELECT pg_notify, UPDATE, COMMIT.
      expect(statements).toEqual(['WITH']);
      const [a, b] = claimed.map((j) => j.id);
      const written = await db.kysely.selectFrom('jobs').select('payload').where('kind', '=', child).orderBy('id').execute();
      expect(written.map((r) => JSON.parse(r.payload))).toEqual(['earlier', `${a}b`, `${b}a`, `${b}b`]);
      // Their NOTIFY, once for the kind, delivered at the statement's commit.
      for (let i = 0; i < 100 && !heard.some((p) => p.endsWith(` ${child}`)); i++) await new Promise((r) => setTimeout(r, 20));
      expect(heard.filter((p) => p.endsWith(` ${child}`))).toHaveLength(1);
    } finally {
      await listener.end();
    }
  });

  it('a combined outcome answers false for a lost claim and still writes every attempt record', async () => {
    const kind = 'test.rt-lost';
    await enqueueMany(db.kysely, jobs(kind, 'T', 2));
    const q = new JobQueue(db);
    const [a, b] = await q.claim('w', { kinds: [kind], limit: 2, leaseMs: 60_000, perKeyLimit: 2 });
    // b's claim is lost: another worker holds it now.
    await db.kysely.updateTable('jobs').set({ locked_by: 'other' }).where('id', '=', b!.id).execute();
    const done = await Promise.all([a!, b!].map((j) => q.complete(j, [mergedWrite(insertDeliveries, attemptOf(j.id, j.attempt))])));
    expect(done).toEqual([true, false]);
    expect(await recordsOf([a!.id, b!.id])).toEqual([[a!.id, 1], [b!.id, 1]]);
  });
});

describe.skipIf(usingPostgres())('SQLite fair claims', () => {
  it('read nothing with the jobs: the run reads its row itself', async () => {
    const kind = 'test.rt-read-sqlite';
    await enqueueMany(db.kysely, [{ kind: kind as `test.${string}`, payload: { subscriptionId: 1 }, fairKey: 'X' }]);
    const [job] = await new JobQueue(db).claim('w', { kinds: [kind], limit: 1, leaseMs: 60_000, perKeyLimit: 1, read: { table: 'webhooks', idField: 'subscriptionId' } });
    expect(job).toBeDefined();
    expect(job!.readRow).toBeUndefined();
  });
});

describe('fair claims from several connections at the same moment', () => {
  it('never run more of one key than its limit, and take every job once', async () => {
    const kind = 'test.rt-race';
    await enqueueMany(db.kysely, jobs(kind, 'R', 40));
    const queues = await Promise.all([0, 1, 2, 3].map(async () => new JobQueue(await connect())));
    const opts: ClaimOptions = { kinds: [kind], limit: 4, leaseMs: 60_000, perKeyLimit: 3 };
    const seen = new Set<number>();
    for (let round = 0; round < 40 && seen.size < 40; round++) {
      const claims = await Promise.all(queues.map((q, w) => q.claim(`w${w}`, opts)));
      const taken = claims.flat();
      expect(taken.length).toBeLessThanOrEqual(3);
      for (const j of taken) {
        expect(seen.has(j.id)).toBe(false);
        seen.add(j.id);
      }
      await Promise.all(claims.flatMap((c, w) => c.map((j) => queues[w]!.complete(j))));
    }
    expect(seen.size).toBe(40);
  });
});
