/**
 * Reusable queries (src/db/reusable-query.ts) and the SQLite statement cache against the real
 * store: later runs bind their own arguments in the right places, also when the first run could
 * not be used as a template, and inside a transaction.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbOrTrx } from '../../src/db/connect.js';
import { boundLimit, literalLimit, ReusableQueriesByShape, reusableQuery } from '../../src/db/reusable-query.js';
import { migratedStore, type TestStore } from '../helpers/store.js';

let store: TestStore;
let db: Db;
beforeAll(async () => {
  store = await migratedStore('rq');
  db = store.db;
  await db.kysely.insertInto('jobs').values([
    { kind: 'rq.a', payload: 'one', run_at_us: 1, max_attempts: 1, created_us: 0 },
    { kind: 'rq.a', payload: 'two', run_at_us: 2, max_attempts: 1, created_us: 0 },
    { kind: 'rq.b', payload: 'one', run_at_us: 3, max_attempts: 1, created_us: 0 },
  ]).execute();
});
afterAll(() => store?.close());

// Arguments bound in the opposite order to the function's: the template must map them back.
const byPayloadAndKind = reusableQuery((d: DbOrTrx, payload: string, kind: string) =>
  d.selectFrom('jobs').select('run_at_us').where('kind', '=', kind).where('payload', '=', payload),
);
const runAt = async (d: DbOrTrx, payload: string, kind: string) => (await byPayloadAndKind(d, payload, kind)).rows.map((r) => Number(r.run_at_us));

describe('reusableQuery', () => {
  it('binds each run its own arguments, after a first run that could not be a template', async () => {
    expect(await runAt(db.kysely, 'rq.a', 'rq.a')).toEqual([]); // equal arguments: run uncompiled
    expect(await runAt(db.kysely, 'one', 'rq.a')).toEqual([1]);
    expect(await runAt(db.kysely, 'two', 'rq.a')).toEqual([2]);
    expect(await runAt(db.kysely, 'one', 'rq.b')).toEqual([3]);
    expect(await runAt(db.kysely, 'two', 'rq.b')).toEqual([]);
    expect(await db.transaction((trx) => runAt(trx, 'two', 'rq.a'))).toEqual([2]);
  });

  it('binds equal and null arguments each to its own place (an insert whose values repeat)', async () => {
    // kind and payload equal, run time and creation time equal, then a null error: each run writes its own values.
    const insertJob = reusableQuery((d: DbOrTrx, kind: string, payload: string, runAt: number, created: number, error: string | null) =>
      d
        .insertInto('jobs')
        .values({ kind, payload, run_at_us: runAt, max_attempts: 1, created_us: created, last_error: error })
        .returning(['kind', 'payload', 'run_at_us', 'created_us', 'last_error']),
    );
    const rows = async (d: DbOrTrx, ...args: [string, string, number, number, string | null]) =>
      (await insertJob(d, ...args)).rows.map((r) => [r.kind, r.payload, Number(r.run_at_us), Number(r.created_us), r.last_error]);
    expect(await rows(db.kysely, 'rq.c', 'rq.c', 7, 7, null)).toEqual([['rq.c', 'rq.c', 7, 7, null]]);
    expect(await rows(db.kysely, 'rq.d', 'four', 8, 9, 'boom')).toEqual([['rq.d', 'four', 8, 9, 'boom']]);
    expect(await db.transaction((trx) => rows(trx, 'rq.e', 'five', 10, 10, null))).toEqual([['rq.e', 'five', 10, 10, null]]);
  });

  it('sees rows written after its statement was first run (the statement cache holds no results)', async () => {
    expect(await runAt(db.kysely, 'three', 'rq.a')).toEqual([]);
    await db.kysely.insertInto('jobs').values({ kind: 'rq.a', payload: 'three', run_at_us: 4, max_attempts: 1, created_us: 0 }).execute();
    expect(await runAt(db.kysely, 'three', 'rq.a')).toEqual([4]);
  });

  it('keeps one query per shape, each with its own SQL and arguments', async () => {
    const byShape = new ReusableQueriesByShape<[kind: string, bound: number], { run_at_us: number }>();
    const page = (d: DbOrTrx, kind: string, desc: boolean, bound: number | null) =>
      byShape.of(`${desc}:${bound !== null}`, (dd, k, b) => {
        let q = dd.selectFrom('jobs').select('run_at_us').where('kind', '=', k);
        if (bound !== null) q = q.where('run_at_us', desc ? '<' : '>', b);
        return q.orderBy('run_at_us', desc ? 'desc' : 'asc');
      })(d, kind, bound ?? 0);
    const at = async (...args: [string, boolean, number | null]) => (await page(db.kysely, ...args)).rows.map((r) => Number(r.run_at_us));
    expect(await at('rq.a', false, null)).toEqual([1, 2, 4]);
    expect(await at('rq.a', true, null)).toEqual([4, 2, 1]);
    expect(await at('rq.a', true, 4)).toEqual([2, 1]);
    expect(await at('rq.a', true, 2)).toEqual([1]);
    expect(await at('rq.a', false, 1)).toEqual([2, 4]);
    expect(await at('rq.b', false, null)).toEqual([3]);
  });

  it('writes a LIMIT as a literal, past maxShapes builds each run afresh, and refuses a limit that is no row count', async () => {
    const byShape = new ReusableQueriesByShape<[kind: string], { run_at_us: number }>(2);
    const first = (kind: string, n: number) =>
      byShape.of(`limit:${n}`, (d, k) => d.selectFrom('jobs').select('run_at_us').where('kind', '=', k).orderBy('run_at_us').limit(literalLimit(n)))(db.kysely, kind);
    for (let round = 0; round < 2; round++) {
      for (const n of [1, 2, 3]) expect((await first('rq.a', n)).rows.map((r) => Number(r.run_at_us))).toEqual([1, 2, 4].slice(0, n));
    }
    expect(db.kysely.selectFrom('jobs').select('kind').limit(literalLimit(7)).compile().sql).toMatch(/limit 7$/);
    for (const bad of [1.5, -1, Number.NaN, 2 ** 60]) expect(() => literalLimit(bad)).toThrow(/not a row limit/);
  });

  it('binds a LIMIT that is no bare parameter: one SQL text whatever the limit, each run limited by its own', async () => {
    const limited = (n: number) => db.kysely.selectFrom('jobs').select('run_at_us').where('kind', '=', 'rq.a').orderBy('run_at_us').limit(boundLimit(n));
    expect(new Set([1, 2, 3].map((n) => limited(n).compile().sql)).size).toBe(1);
    expect(limited(2).compile().sql).not.toMatch(/limit \?$/i);
    for (const n of [3, 1, 2, 0]) expect((await limited(n).execute()).map((r) => Number(r.run_at_us))).toEqual([1, 2, 4].slice(0, n));
    for (const bad of [1.5, -1, Number.NaN, 2 ** 60]) expect(() => boundLimit(bad)).toThrow(/not a row limit/);
  });
});

describe('reusableQuery in a transaction (on SQLite run on the connection after the first statement)', () => {
  // Every value an argument: a template (a value bound from the build itself would make none).
  const insertJob = reusableQuery((d: DbOrTrx, kind: string, payload: string, runAt: number, maxAttempts: number, created: number) =>
    d.insertInto('jobs').values({ kind, payload, run_at_us: runAt, max_attempts: maxAttempts, created_us: created }),
  );
  const insertJobReturning = reusableQuery((d: DbOrTrx, kind: string, payload: string, runAt: number, maxAttempts: number, created: number) =>
    d.insertInto('jobs').values({ kind, payload, run_at_us: runAt, max_attempts: maxAttempts, created_us: created }).returning(['payload', 'run_at_us']),
  );
  const insertPlain = (d: DbOrTrx, kind: string, payload: string) => insertJob(d, kind, payload, 50, 1, 0);
  const insertReturning = (d: DbOrTrx, kind: string, payload: string) => insertJobReturning(d, kind, payload, 60, 1, 0);
  const payloads = async (d: DbOrTrx, kind: string) => (await d.selectFrom('jobs').select('payload').where('kind', '=', kind).orderBy('id').execute()).map((r) => r.payload);

  it('answers each statement of a transaction as Kysely does: rows, and an insert’s counts', async () => {
    const answers = await db.transaction(async (trx) => {
      const out: unknown[] = [];
      for (const payload of ['p1', 'p2', 'p3']) {
        const plain = await insertPlain(trx, 'rq.t', payload);
        out.push([plain.rows, plain.numAffectedRows, typeof plain.insertId]);
        out.push((await insertReturning(trx, 'rq.t', `${payload}r`)).rows.map((r) => [r.payload, Number(r.run_at_us)]));
        out.push(await runAt(trx, payload, 'rq.t'));
      }
      return out;
    });
    // The first insert's answer is Kysely's own (the transaction's first statement): the later ones, as it.
    const plain = answers[0] as [unknown[], bigint, string];
    expect(plain[0]).toEqual([]);
    expect(plain[1]).toBe(1n);
    expect(answers).toEqual([plain, [['p1r', 60]], [50], plain, [['p2r', 60]], [50], plain, [['p3r', 60]], [50]]);
    expect(await payloads(db.kysely, 'rq.t')).toEqual(['p1', 'p1r', 'p2', 'p2r', 'p3', 'p3r']);
  });

  it('writes nothing of a transaction that rolls back, statements run on the connection included', async () => {
    await expect(
      db.transaction(async (trx) => {
        for (const payload of ['x1', 'x2', 'x3']) await insertPlain(trx, 'rq.rollback', payload);
        expect(await payloads(trx, 'rq.rollback')).toEqual(['x1', 'x2', 'x3']);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await payloads(db.kysely, 'rq.rollback')).toEqual([]);
  });

  it('refuses a transaction used after its end, also while another transaction is open, and writes nothing into that one', async () => {
    let stale: DbOrTrx | undefined;
    await db.transaction(async (trx) => {
      stale = trx;
      await insertPlain(trx, 'rq.stale', 'inside');
      await insertPlain(trx, 'rq.stale', 'inside too');
    });
    const staleTrx = stale as DbOrTrx;
    await expect(insertPlain(staleTrx, 'rq.stale', 'after the end')).rejects.toThrow(/committed|rolled back/i);
    await expect(
      db.transaction(async (other) => {
        await insertPlain(other, 'rq.stale', 'other');
        await expect(insertPlain(staleTrx, 'rq.stale', 'into the other')).rejects.toThrow(/committed|rolled back/i);
        throw new Error('roll the other back');
      }),
    ).rejects.toThrow('roll the other back');
    expect(await payloads(db.kysely, 'rq.stale')).toEqual(['inside', 'inside too']);
  });
});
