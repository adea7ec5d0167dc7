/**
 * Group commit against the real store: concurrent writes share transactions (fewer commits than
 * writes), each resolves with its own result once committed, and one failing write fails alone.
 * Writes of one shape (`merged`) are one statement per batch, in order with the plain writes.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connect.js';
import { GroupCommit, mergedWrite, type MergedStatement } from '../../src/db/group-commit.js';
import { migratedStore, type TestStore } from '../helpers/store.js';

let store: TestStore;
let db: Db;
beforeAll(async () => {
  store = await migratedStore('gc');
  db = store.db;
});
afterAll(() => store?.close());

const insertJob = (kind: string) => (d: typeof db.kysely) =>
  d.insertInto('jobs').values({ kind, payload: '1', run_at_us: 0, max_attempts: 1, created_us: 0 }).returning('id').executeTakeFirstOrThrow();

describe('GroupCommit', () => {
  it('shares transactions between concurrent writes and resolves each with its own result', async () => {
    const writes = new GroupCommit(db);
    // PostgreSQL names each transaction; SQLite has one writer and no ids, so only the results count there.
    const seen = new Set<string>();
    const counted = <T>(w: (d: typeof db.kysely) => Promise<T>) => async (trx: typeof db.kysely) => {
      const txid = db.dialect === 'postgres' ? (await sql<{ x: string }>`SELECT txid_current()::text AS x`.execute(trx)).rows[0]!.x : 'sqlite';
      seen.add(txid);
      return w(trx);
    };
    const ids = await Promise.all(Array.from({ length: 50 }, () => writes.run(counted(insertJob('gc.shared')))));
    expect(new Set(ids.map((r) => Number(r.id))).size).toBe(50);
    const rows = await db.kysely.selectFrom('jobs').select('id').where('kind', '=', 'gc.shared').execute();
    expect(rows).toHaveLength(50);
    if (db.dialect === 'postgres') expect(seen.size).toBeLessThan(50);
  });

  it('a failing write fails alone; the others of its batch commit', async () => {
    const writes = new GroupCommit(db);
    const results = await Promise.allSettled([
      writes.statement(insertJob('gc.ok')),
      writes.statement((d) => sql`INSERT INTO no_such_table VALUES (1)`.execute(d)),
      writes.statement(insertJob('gc.ok')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const rows = await db.kysely.selectFrom('jobs').select('id').where('kind', '=', 'gc.ok').execute();
    expect(rows).toHaveLength(2);
  });

  it('a write marked unsynced (a claim) is answered at its commit; the others of its batch once the commit is on disk', async () => {
    const writes = new GroupCommit(db);
    const answered: string[] = [];
    // Queued in one turn: one batch, the durable write first.
    await Promise.all([
      writes.run(insertJob('gc.durable')).then(() => answered.push('durable')),
      writes.statement(insertJob('gc.unsynced'), { unsynced: true }).then(() => answered.push('unsynced')),
    ]);
    // SQLite syncs the WAL after the commit (wal-sync.ts): only the durable write waits for it.
    // A PostgreSQL commit is durable when it returns: both are answered then, in order.
    expect(answered).toEqual(db.dialect === 'sqlite' ? ['unsynced', 'durable'] : ['durable', 'unsynced']);
    const rows = await db.kysely.selectFrom('jobs').select('kind').where('kind', 'in', ['gc.durable', 'gc.unsynced']).execute();
    expect(rows).toHaveLength(2);
  });
});

describe('GroupCommit merged statements', () => {
  /** Inserts one job per argument in one INSERT, and remembers how many it was called with. */
  function insertingJobs(kind: string): { statement: MergedStatement<number, string>; calls: number[] } {
    const calls: number[] = [];
    const statement: MergedStatement<number, string> = async (d, args) => {
      calls.push(args.length);
      await d.insertInto('jobs').values(args.map((n) => ({ kind, payload: String(n), run_at_us: 0, max_attempts: 1, created_us: 0 }))).execute();
      return args.map((n) => `row ${n}`);
    };
    return { statement, calls };
  }
  const count = async (kind: string, d: typeof db.kysely = db.kysely) => (await d.selectFrom('jobs').select('id').where('kind', '=', kind).execute()).length;

  it('runs the batch’s writes of one shape as one statement, each resolving with its own result; a plain write queued after them sees them', async () => {
    const writes = new GroupCommit(db);
    const { statement, calls } = insertingJobs('gc.merged');
    const before = insertingJobs('gc.merged-before');
    const merged = Array.from({ length: 20 }, (_, n) => writes.merged(statement, n, [mergedWrite(before.statement, n)]));
    const seenAfter = writes.statement((d) => count('gc.merged', d));
    expect(await Promise.all(merged)).toEqual(Array.from({ length: 20 }, (_, n) => `row ${n}`));
    expect(await seenAfter).toBe(20);
    expect(calls).toEqual([20]);
    // The writes handed in with them (attempt records) are merged the same way.
    expect(before.calls).toEqual([20]);
    expect(await count('gc.merged-before')).toBe(20);
  });

  it('a batch that fails runs each merged write again alone: only the failing one fails', async () => {
    const writes = new GroupCommit(db);
    const { statement } = insertingJobs('gc.merged-retry');
    const failing = (d: Parameters<MergedStatement<number, string>>[0]) => sql`INSERT INTO no_such_table VALUES (1)`.execute(d);
    const results = await Promise.allSettled([writes.merged(statement, 1), writes.merged(statement, 2, [failing]), writes.merged(statement, 3)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await count('gc.merged-retry')).toBe(2);
  });

  it('a batch of statements and combinable writes (PostgreSQL: each part commits on its own) fails only where a statement fails, and runs nothing twice', async () => {
    const writes = new GroupCommit(db);
    const calls: number[] = [];
    // Combinable: a part of its own, an insert of new rows.
    const insertPart = (d: typeof db.kysely, args: readonly number[]) => d.insertInto('jobs').values(args.map((n) => ({ kind: 'gc.segments', payload: String(n), run_at_us: 0, max_attempts: 1, created_us: 0 })));
    const statement: MergedStatement<number, string> = Object.assign(
      async (d: typeof db.kysely, args: readonly number[]) => {
        calls.push(args.length);
        await insertPart(d, args).execute();
        return args.map((n) => `row ${n}`);
      },
      { part: (d: typeof db.kysely, args: readonly number[]) => ({ query: insertPart(d, args), returnsRows: false, fromRows: () => args.map((n) => `row ${n}`) }) },
    );
    const results = await Promise.allSettled([
      writes.merged(statement, 1),
      writes.merged(statement, 2),
      writes.statement((d) => sql`INSERT INTO no_such_table VALUES (1)`.execute(d)),
      writes.statement((d) => count('gc.segments', d)),
      writes.merged(statement, 3),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    // The statement after the failing one sees the writes before it.
    expect((results[3] as PromiseFulfilledResult<number>).value).toBe(2);
    expect(await count('gc.segments')).toBe(3);
    // PostgreSQL: the first two in one statement, never again (their commit was their own).
    // SQLite: one transaction for the batch, rolled back, then each write alone.
    expect(calls).toEqual(db.dialect === 'postgres' ? [2, 1] : [2, 1, 1, 1]);
  });
});
