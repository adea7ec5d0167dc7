/**
 * Search's text conditions go through the trigram index of migration 0012 on both databases
 * (EXPLAIN / EXPLAIN QUERY PLAN of the page query the repository runs), the index follows every
 * change of a file row in the same transaction, and the answers equal a plain substring scan.
 * Straight on the metadata store: no server is needed to read a query plan.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrations.js';
import { FileRepo } from '../../src/files/repo.js';
import { parseSearch, type SearchQuery } from '../../src/files/search-query.js';
import type { FileRecord } from '../../src/core/file-record.js';
import { newSchema, usingPostgres } from '../helpers/server.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-search-'));
const schema = newSchema();
let db: Db;
let repo: FileRepo;
let projectA: number;
let projectB: number;
const ROWS = 3000;
const FILLER = 100_000;
const WORDS = ['invoice', 'holiday', 'contract', 'diagram', 'receipt', 'passport', 'portrait', 'sunset'];

function query(body: unknown): SearchQuery {
  const parsed = parseSearch(body);
  if ('errors' in parsed) throw new Error(JSON.stringify(parsed.errors));
  return parsed.query;
}

function file(projectId: number, i: number): FileRecord {
  const word = WORDS[i % WORDS.length]!;
  return {
    uuid: crypto.randomUUID(), projectId, uploadedUs: 1_700_000_000_000_000 + projectId * 10_000_000 + i, storedUs: null, removedUs: null,
    size: 100 + i, mimeType: i % 3 === 0 ? 'image/png' : 'application/pdf', declaredType: 'application/octet-stream',
    originalFilename: `${word}-${i} Ünïcode.${i % 3 === 0 ? 'png' : 'pdf'}`, filename: `${word}-${i}.bin`, isImage: i % 3 === 0, isReady: true,
    contentInfo: null, metadata: i % 10 === 0 ? { department: `Finance ${word.toUpperCase()} team` } : {}, appdata: {}, blobKey: null,
    md5: 'x', sourceUrl: null, tags: [],
  };
}

async function insertProject(name: string): Promise<number> {
  await db.kysely.insertInto('projects').values({ name, pub_key: `${name}-${crypto.randomUUID()}`, autostore: 1, signed_uploads: 0, created_us: 1 }).execute();
  const r = await db.kysely.selectFrom('projects').select('id').where('name', '=', name).executeTakeFirstOrThrow();
  return Number(r.id);
}

beforeAll(async () => {
  db = await openDb({ databaseUrl: process.env['STOWAGE_DATABASE_URL'] ?? '', dataDir, ...(schema ? { schema } : {}) });
  await migrate(db);
  repo = new FileRepo(db);
  projectA = await insertProject('a');
  projectB = await insertProject('b');
  for (const p of [projectA, projectB]) {
    await db.transaction(async (trx) => {
      for (let i = 0; i < ROWS; i++) await repo.insert(trx, file(p, i));
    });
  }
  if (usingPostgres()) {
    // PostgreSQL's planner reads a small project whole, as it should; the trigram indexes win from
    // some 80 000 rows on (docs/files.md). Matching nothing searched below, these rows only make the
    // project that large.
    await sql`insert into files (uuid, project_id, uploaded_us, size, mime_type, original_filename, filename, is_image, is_ready, metadata, appdata, md5, tags, detected_mime)
      select gen_random_uuid()::text, ${projectA}, 1600000000000000 + i, i, 'text/plain', 'filler-' || i || '.txt', 'filler.txt', 0, 1, '{}', '{}', 'x', '[]', 'text/plain'
      from generate_series(1, ${FILLER}) as i`.execute(db.kysely);
  }
  await sql`analyze`.execute(db.kysely);
}, 180_000);

afterAll(async () => {
  await db?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('the text index', () => {
  it('answers the page query of a text search through the trigram index', async () => {
    const plan = async (body: unknown) => (await repo.searchPlan(projectA, query(body), 21)).join('\n');
    // Selective terms (one file each): a common one is better served by walking the time order.
    const text = await plan({ query: 'passport-2957' });
    if (usingPostgres()) {
      for (const column of ['original_filename', 'detected_mime', 'metadata']) expect(text, text).toContain(`Bitmap Index Scan on files_${column}_trgm`);
      expect(text, text).not.toMatch(/Seq Scan/);
    } else {
      expect(text, text).toMatch(/SCAN files_text VIRTUAL TABLE INDEX \d+:M/);
      expect(text, text).not.toMatch(/SCAN files\b/);
    }
    const phrase = await plan({ phrase: { original_filename: 'sunset-2999' } });
    expect(phrase, phrase).toMatch(usingPostgres() ? /Bitmap Index Scan on files_original_filename_trgm/ : /SCAN files_text VIRTUAL TABLE INDEX \d+:M/);
  });

  it('finds the same files as a substring scan would, case-insensitively, only in the project', async () => {
    const all = [...Array(ROWS).keys()].map((i) => file(projectA, i));
    const expectUuids = async (body: unknown, keep: (f: FileRecord) => boolean) => {
      const q = query(body);
      const found = await repo.search(projectA, q, { limit: 100, offset: 0, cursor: null });
      const count = await repo.searchCount(projectA, q);
      const wanted = all.filter(keep);
      expect(count).toBe(wanted.length);
      expect(wanted.length).toBeGreaterThan(0);
      const names = new Set(wanted.map((f) => f.originalFilename));
      for (const f of found) expect(names.has(f.originalFilename) && f.projectId === projectA, f.originalFilename).toBe(true);
      expect(found).toHaveLength(Math.min(100, wanted.length));
    };
    await expectUuids({ query: 'PASSPORT-12' }, (f) => f.originalFilename.toLowerCase().includes('passport-12'));
    await expectUuids({ phrase: { metadata: 'finance invoice' } }, (f) => (f.metadata['department'] ?? '').toLowerCase().includes('finance invoice'));
    await expectUuids({ phrase: { detected_mime_type: 'image/p' } }, (f) => f.mimeType.includes('image/p'));
    await expectUuids({ query: 'ünïcode.png', size: { lt: 160 } }, (f) => f.originalFilename.toLowerCase().includes('ünïcode.png') && f.size < 160);
  });

  it('follows renames of metadata and deletes of rows in the same transaction', async () => {
    const f = file(projectA, ROWS + 1);
    await db.transaction((trx) => repo.insert(trx, { ...f, originalFilename: 'zebra-crossing.jpg' }));
    expect(await repo.searchCount(projectA, query({ query: 'zebra-cross' }))).toBe(1);
    await repo.update(db.kysely, projectA, f.uuid, { metadata: JSON.stringify({ note: 'quokka sighting' }) });
    expect(await repo.searchCount(projectA, query({ phrase: { metadata: 'quokka' } }))).toBe(1);
    expect(await repo.searchCount(projectA, query({ query: 'zebra-cross' }))).toBe(1);
    await db.kysely.deleteFrom('files').where('uuid', '=', f.uuid).execute();
    expect(await repo.searchCount(projectA, query({ query: 'zebra-cross' }))).toBe(0);
  });
});
