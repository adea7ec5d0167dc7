/**
 * Migration 0018 fills project_counters from the rows already there, so a database upgraded in
 * place answers the same `total` / `totals` as counting its rows. The store is brought to 0017, files in each
 * state and groups are written as 0017 wrote them, then migrated to the latest.
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
import { GroupRepo } from '../../src/groups/repo.js';
import { newSchema } from '../helpers/server.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-counters-'));
const schema = newSchema();
let db: Db;
const projects: number[] = [];

async function migrateTo(name: string): Promise<void> {
  const migrations: Record<string, Migration> = {};
  for (const [n, step] of MIGRATIONS) migrations[n] = { up: (k) => step(k, db.dialect) };
  const { error } = await new Migrator({ db: db.kysely, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) }).migrateTo(name);
  if (error) throw error;
}

/** Project p gets 10·(p+1) files: every 3rd removed (every 6th of those keeping a stored time, as imports do), every 2nd stored; and p+2 groups. */
async function fill(trx: Db['kysely'], project: number, p: number): Promise<void> {
  for (let i = 0; i < 10 * (p + 1); i++) {
    const removed = i % 3 === 0 ? 1_700_000_000_000_100 + i : null;
    const stored = i % 2 === 0 || i % 6 === 0 ? 1_700_000_000_000_050 + i : null;
    await sql`insert into files (uuid, project_id, uploaded_us, stored_us, removed_us, size, mime_type, original_filename, filename, is_image, is_ready, metadata, appdata, md5, tags, detected_mime)
      values (${crypto.randomUUID()}, ${project}, ${1_700_000_000_000_000 + i}, ${stored}, ${removed}, ${i}, 'text/plain', 'f.txt', 'f.txt', 0, 1, '{}', '{}', 'x', '[]', 'text/plain')`.execute(trx);
  }
  for (let g = 0; g < p + 2; g++) {
    await sql`insert into file_groups (uuid, project_id, files_count, created_us) values (${crypto.randomUUID()}, ${project}, 1, ${1_700_000_000_000_000 + g})`.execute(trx);
  }
}

beforeAll(async () => {
  db = await openDb({ databaseUrl: process.env['STOWAGE_DATABASE_URL'] ?? '', dataDir, ...(schema ? { schema } : {}) });
  await migrateTo('0017_file_labels');
  for (let p = 0; p < 3; p++) {
    const r = await db.kysely.insertInto('projects').values({ name: `p${p}`, pub_key: `p-${crypto.randomUUID()}`, autostore: 1, signed_uploads: 0, created_us: 1 }).returning('id').executeTakeFirstOrThrow();
    projects.push(Number(r.id));
  }
  await db.transaction(async (trx) => {
    // The third project has no rows at all: it gets zeros.
    for (const [p, id] of projects.slice(0, 2).entries()) await fill(trx, id, p);
  });
  await migrate(db);
}, 120_000);

afterAll(async () => {
  await db?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('migration 0018', () => {
  it('backfills the counters: the list totals equal COUNT(*) of the existing rows', async () => {
    const files = new FileRepo(db);
    const groups = new GroupRepo(db);
    for (const [p, id] of projects.entries()) {
      const n = p < 2 ? 10 * (p + 1) : 0;
      const idx = [...Array(n).keys()];
      const removed = idx.filter((i) => i % 3 === 0).length;
      const stored = idx.filter((i) => i % 3 !== 0 && i % 2 === 0).length;
      expect(await files.totals(id)).toEqual({ removed, stored, unstored: n - removed - stored });
      expect(await files.count({ projectId: id, removed: false, stored: null })).toBe(n - removed);
      // Removed files keeping a stored time: counted from the rows.
      const keepingStored = idx.filter((i) => i % 6 === 0).length;
      expect(await files.count({ projectId: id, removed: true, stored: true })).toBe(keepingStored);
      expect(await files.count({ projectId: id, removed: true, stored: false })).toBe(removed - keepingStored);
      expect(await groups.count(id)).toBe(p < 2 ? p + 2 : 0);
    }
  });
});
