/**
 * Migration 0017 fills file_labels from the appdata of the files already there (in keyset batches),
 * so a database upgraded in place answers `appdata_labels` from its files' appdata. The store is brought to 0016,
 * rows are written as 0016 wrote them (appdata JSON text only), then migrated to the latest.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Migrator, sql, type Migration } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrations.js';
import { MIGRATIONS } from '../../src/db/migrations/index.js';
import { FileRepo } from '../../src/files/repo.js';
import { parseSearch } from '../../src/files/search-query.js';
import { newSchema, usingPostgres } from '../helpers/server.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-labels-'));
const schema = newSchema();
let db: Db;
const ROWS = 2500;

async function migrateTo(name: string): Promise<void> {
  const migrations: Record<string, Migration> = {};
  for (const [n, step] of MIGRATIONS) migrations[n] = { up: (k) => step(k, db.dialect) };
  const { error } = await new Migrator({ db: db.kysely, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) }).migrateTo(name);
  if (error) throw error;
}

/** appdata as the add-on wrote it: file i carries `Thing <i % 1000>`; every 7th one a moderation label too. */
function appdata(i: number): string {
  const entry = (data: unknown) => ({ data, version: '1', datetime_created: '2024-01-01T00:00:00Z', datetime_updated: '2024-01-01T00:00:00Z' });
  if (i % 5 === 0) return '{}';
  const out: Record<string, unknown> = { aws_rekognition_detect_labels: entry({ Labels: [{ Name: `Thing ${i % 1000}`, Parents: [{ Name: 'Stuff' }] }] }) };
  if (i % 7 === 0) out['aws_rekognition_detect_moderation_labels'] = entry({ ModerationLabels: [{ Name: 'Smoking', ParentName: 'Tobacco' }] });
  return JSON.stringify(out);
}

beforeAll(async () => {
  db = await openDb({ databaseUrl: process.env['STOWAGE_DATABASE_URL'] ?? '', dataDir, ...(schema ? { schema } : {}) });
  await migrateTo('0016_dashboard_sessions');
  await db.kysely.insertInto('projects').values({ name: 'p', pub_key: `p-${crypto.randomUUID()}`, autostore: 1, signed_uploads: 0, created_us: 1 }).execute();
  const project = Number((await db.kysely.selectFrom('projects').select('id').executeTakeFirstOrThrow()).id);
  await db.transaction(async (trx) => {
    for (let i = 0; i < ROWS; i++) {
      await sql`insert into files (uuid, project_id, uploaded_us, size, mime_type, original_filename, filename, is_image, is_ready, metadata, appdata, md5, tags, detected_mime)
        values (${crypto.randomUUID()}, ${project}, ${1_700_000_000_000_000 + i}, ${i}, 'image/jpeg', ${`f-${i}.jpg`}, 'f.jpg', 1, 1, '{}', ${appdata(i)}, 'x', '[]', 'image/jpeg')`.execute(trx);
    }
  });
  await migrate(db);
}, 180_000);

afterAll(async () => {
  await db?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('migration 0017', () => {
  it('indexes the label names of existing appdata, over more rows than one batch', async () => {
    const labeled = [...Array(ROWS).keys()].filter((i) => i % 5 !== 0);
    const rows = Number((await db.kysely.selectFrom('file_labels').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    // Thing <n> and Stuff on each labeled file, Smoking on every 7th of those.
    expect(rows).toBe(labeled.length * 2 + labeled.filter((i) => i % 7 === 0).length);
    const repo = new FileRepo(db);
    const project = Number((await db.kysely.selectFrom('projects').select('id').executeTakeFirstOrThrow()).id);
    const count = (labels: string[]) => {
      const parsed = parseSearch({ appdata_labels: labels });
      if ('errors' in parsed) throw new Error(JSON.stringify(parsed.errors));
      return repo.searchCount(project, parsed.query);
    };
    expect(await count(['Thing 1'])).toBe(3); // 1, 1001, 2001
    expect(await count(['thing 1000'])).toBe(0);
    expect(await count(['STUFF'])).toBe(labeled.length);
    expect(await count(['Smoking'])).toBe(labeled.filter((i) => i % 7 === 0).length);
    expect(await count(['Tobacco'])).toBe(0);
  });

  // This store never ran ANALYZE (nor does a server): SQLite then guesses a project is small and
  // would walk it whole for a rare label; the repository has it start from file_labels' key then,
  // and walk the project's time order for a label on most files. (PostgreSQL's planner goes by its
  // own statistics: test/files/search-index.test.ts.)
  it.skipIf(usingPostgres())('starts a rare label search from file_labels on SQLite without statistics, and walks the project for a common one', async () => {
    const project = Number((await db.kysely.selectFrom('projects').select('id').executeTakeFirstOrThrow()).id);
    const plan = async (labels: string[]) => {
      const parsed = parseSearch({ appdata_labels: labels });
      if ('errors' in parsed) throw new Error(JSON.stringify(parsed.errors));
      return (await new FileRepo(db).searchPlan(project, parsed.query, 21)).join('\n');
    };
    const rare = await plan(['Thing 1']);
    expect(rare, rare).toMatch(/SEARCH file_labels USING COVERING INDEX sqlite_autoindex_file_labels_1 \(project_id=\? AND label_lower=\?\)/);
    expect(rare, rare).toMatch(/SEARCH files USING INDEX sqlite_autoindex_files_1 \(uuid=\?\)/);
    expect(rare, rare).not.toMatch(/files_project_uploaded|files_live_uploaded|SCAN files\b/);
    const common = await plan(['Stuff']);
    // The project's time order: of all its files, or (migration 0018's partial index) of its live ones.
    expect(common, common).toMatch(/SEARCH files USING INDEX (files_project_uploaded|files_live_uploaded) \(project_id=\?\)/);
  });
});
