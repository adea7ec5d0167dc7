/**
 * Fair claims against the real store: round trips to PostgreSQL counted on the client (BEGIN and
 * COMMIT included, which no Kysely plugin sees), and the per-key limit held when several
 * connections claim the same key at the same moment. (That test passes without the advisory lock
 * too: with one key, a claim whose snapshot is stale picks the rows it thinks are next, and the
 * ones another claim took fail its re-check. The lock guards rarer interleavings, such as a row
 * that fell due between the two claims' clocks.)
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connect.js';
import { mergedWrite } from '../../src/db/group-commit.js';
import { enqueueMany, JobQueue, type ClaimOptions } from '../../src/jobs/queue.js';
import { insertDeliveries, type NewDelivery } from '../../src/webhooks/repo.js';
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

/**
 * Runs `fn` counting every statement the pg client sends meanwhile (each one a round trip), by
 * first word. Left out: the burial of jobs out of attempts, which a queue runs at most once a
 * second per set of kinds (JobQueue.buryAbandoned), not per claim.
 */
async function roundTrips<T>(fn: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const statements: string[] = [];
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0];
    const text = typeof first === 'string' ? first : (first as { text?: string } | undefined)?.text;
    if (text && !text.includes('>= "max_attempts"')) statements.push(text.trim().split(/\s+/)[0]!.toUpperCase());
    return original.apply(this, args);
  };
  try {
    return { result: await fn(), statements };
  } finally {
    proto.query = original;
  }
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

  it('a claim queued behind completions shares their transaction with one statement of its own', async () => {
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
    // BEGIN, the completions' one UPDATE, the claim, COMMIT.
    expect(statements).toEqual(['BEGIN', 'UPDATE', 'SELECT', 'COMMIT']);
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
