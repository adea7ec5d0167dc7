/**
 * SQLite (migrations 0023 and 0029): the expiry sweep and the `/from_url/` duplicate check read
 * partial indexes that a stored direct upload does not enter, the index of every row's upload time
 * is gone, and so is the index of every row's size: a search by size reads the partial size index
 * of the files it asks for (live, stored or removed). The plans are those of the queries as
 * src/files/repo.ts and src/files/search/repo.ts write them.
 */
import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connect.js';
import { usingPostgres } from '../helpers/server.js';
import { migratedStore, type TestStore } from '../helpers/store.js';

let store: TestStore;
let db: Db;

async function plan(query: { compile(): { sql: string; parameters: readonly unknown[] } }): Promise<string> {
  const c = query.compile();
  const rows = await db.kysely.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${c.sql}`, [...c.parameters]));
  return rows.rows.map((r) => r.detail).join('\n');
}

describe.skipIf(usingPostgres())('the upload-path indexes of files (SQLite)', () => {
  beforeAll(async () => {
    store = await migratedStore('upload-indexes');
    db = store.db;
  });
  afterAll(() => store?.close());

  it('has partial indexes for the expiry sweep and the from_url check, and no index of every upload time', async () => {
    const indexes = await sql<{ name: string; sql: string }>`select name, sql from sqlite_master where type = 'index' and tbl_name = 'files'`.execute(db.kysely);
    const byName = new Map(indexes.rows.map((r) => [r.name, r.sql]));
    expect(byName.has('files_uploaded')).toBe(false);
    expect(byName.get('files_unstored_expiry')).toMatch(/where removed_us is null and stored_us is null/i);
    expect(byName.get('files_project_source_url')).toMatch(/where source_url is not null/i);
  });

  it('answers the expiry scan and the duplicate check through them', async () => {
    const k = db.kysely;
    const expiry = k.selectFrom('files').select(['uuid', 'project_id']).where('stored_us', 'is', null).where('removed_us', 'is', null).where('uploaded_us', '<', 5).orderBy('uploaded_us').limit(500);
    expect(await plan(expiry)).toMatch(/files_unstored_expiry/);
    const fromUrl = k.selectFrom('files').selectAll().where('project_id', '=', 1).where('source_url', '=', 'https://example.com/a.png').where('removed_us', 'is', null).orderBy('uploaded_us', 'desc').limit(1);
    expect(await plan(fromUrl)).toMatch(/files_project_source_url/);
  });

  it('has no index of every file\'s size: a search by size reads the partial size index of its files', async () => {
    const indexes = await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'files'`.execute(db.kysely);
    expect(indexes.rows.map((r) => r.name)).not.toContain('files_project_size');
    const k = db.kysely;
    const bySize = (removed: boolean, stored?: boolean) => {
      let q = k.selectFrom('files').select('uuid').where('project_id', '=', 1).where('removed_us', removed ? 'is not' : 'is', null);
      if (stored !== undefined) q = q.where('stored_us', stored ? 'is not' : 'is', null);
      return q.where('size', '<', 160).orderBy('uploaded_us', 'desc').limit(21);
    };
    expect(await plan(bySize(false))).toMatch(/files_live_size/);
    expect(await plan(bySize(false, true))).toMatch(/files_stored_size/);
    expect(await plan(bySize(false, false))).toMatch(/files_unstored_size/);
    expect(await plan(bySize(true))).toMatch(/files_removed_size/);
  });
});
