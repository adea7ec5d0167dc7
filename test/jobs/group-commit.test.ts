/**
 * Group commit against the real store: concurrent writes share transactions (fewer commits than
 * writes), each resolves with its own result once committed, and one failing write fails alone.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/db/connect.js';
import { GroupCommit } from '../../src/db/group-commit.js';
import { migrate } from '../../src/db/migrations.js';
import { newSchema } from '../helpers/server.js';

let db: Db;
beforeAll(async () => {
  const schema = newSchema();
  db = await openDb({ databaseUrl: process.env['STOWAGE_DATABASE_URL'] ?? '', dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-gc-')), ...(schema ? { schema } : {}) });
  await migrate(db);
});
afterAll(async () => {
  await db?.close();
});

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
});
