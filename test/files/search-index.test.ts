/**
 * Search's text conditions go through the trigram index of migration 0012 on both databases
 * (EXPLAIN / EXPLAIN QUERY PLAN of the page query the repository runs), the index follows every
 * change of a file row in the same transaction, and the answers equal a plain substring scan.
 * `appdata_labels` goes through file_labels (migration 0017) the same way, and finds what the
 * former `"Name":"<label>"` text match over the appdata JSON found (case-insensitively).
 * Straight on the metadata store: no server is needed to read a query plan.
 */
import crypto from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connect.js';
import { FileRepo } from '../../src/files/repo.js';
import { parseSearch, type SearchQuery } from '../../src/files/search-query.js';
import type { AppdataEntry, FileRecord } from '../../src/core/file-record.js';
import { usingPostgres } from '../helpers/server.js';
import { migratedStore, type TestStore } from '../helpers/store.js';

let store: TestStore;
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

const entry = (data: unknown): AppdataEntry => ({ data, version: '1', datetime_created: '2024-01-01T00:00:00Z', datetime_updated: '2024-01-01T00:00:00Z' });

/** Add-on results on a third of the files: a selective label (`Object <n>`), parents, one accented name, moderation labels. */
function appdata(i: number): FileRecord['appdata'] {
  if (i % 3 !== 1) return {};
  const labels = [{ Name: `Object ${i % 700}`, Confidence: 91.5, Parents: [{ Name: i % 2 ? 'Animal' : 'Plant' }] }];
  if (i % 100 === 1) labels.push({ Name: 'Étagère', Confidence: 80, Parents: [] });
  const out: FileRecord['appdata'] = { aws_rekognition_detect_labels: entry({ Labels: labels, LabelModelVersion: '3.0' }) };
  if (i % 30 === 4) out['aws_rekognition_detect_moderation_labels'] = entry({ ModerationLabels: [{ Name: 'Smoking', ParentName: 'Tobacco', Confidence: 70 }] });
  return out;
}

function file(projectId: number, i: number): FileRecord {
  const word = WORDS[i % WORDS.length]!;
  return {
    uuid: crypto.randomUUID(), projectId, uploadedUs: 1_700_000_000_000_000 + projectId * 10_000_000 + i, storedUs: null, removedUs: null,
    size: 100 + i, mimeType: i % 3 === 0 ? 'image/png' : 'application/pdf', declaredType: 'application/octet-stream',
    originalFilename: `${word}-${i} Ünïcode.${i % 3 === 0 ? 'png' : 'pdf'}`, filename: `${word}-${i}.bin`, isImage: i % 3 === 0, isReady: true,
    contentInfo: null, metadata: i % 10 === 0 ? { department: `Finance ${word.toUpperCase()} team` } : {}, appdata: appdata(i), blobKey: null,
    md5: 'x', sourceUrl: null, tags: [],
  };
}

async function insertProject(name: string): Promise<number> {
  await db.kysely.insertInto('projects').values({ name, pub_key: `${name}-${crypto.randomUUID()}`, autostore: 1, signed_uploads: 0, created_us: 1 }).execute();
  const r = await db.kysely.selectFrom('projects').select('id').where('name', '=', name).executeTakeFirstOrThrow();
  return Number(r.id);
}

beforeAll(async () => {
  store = await migratedStore('search');
  db = store.db;
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

afterAll(() => store?.close());

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

/** The former condition, as an oracle: some `"Name":"<label>"` in the appdata JSON text, compared case-insensitively. */
function textMatch(f: FileRecord, labels: string[]): boolean {
  const wanted = new Set(labels.map((l) => l.toLowerCase()));
  const names = [...JSON.stringify(f.appdata).matchAll(/"Name":("(?:[^"\\]|\\.)*")/g)].map((m) => (JSON.parse(m[1]!) as string).toLowerCase());
  return names.some((n) => wanted.has(n));
}

describe('the labels index', () => {
  it('answers the page query of an appdata_labels search through file_labels, without scanning files', async () => {
    const text = (await repo.searchPlan(projectA, query({ appdata_labels: ['Object 7'] }), 21)).join('\n');
    if (usingPostgres()) {
      expect(text, text).toMatch(/Index (Only )?Scan using file_labels_pk on file_labels/);
      expect(text, text).not.toMatch(/Seq Scan/);
    } else {
      expect(text, text).toMatch(/SEARCH file_labels USING COVERING INDEX sqlite_autoindex_file_labels_1 \(project_id=\? AND label_lower=\?\)/);
      expect(text, text).not.toMatch(/SCAN files\b/);
    }
  });

  it('finds what the text match over appdata found, case-insensitively, whole names only, only in the project', async () => {
    const all = [...Array(ROWS).keys()].map((i) => file(projectA, i));
    const expectSame = async (labels: string[], more: Record<string, unknown> = {}, keep: (f: FileRecord) => boolean = () => true) => {
      const q = query({ appdata_labels: labels, ...more });
      const found = await repo.search(projectA, q, { limit: 100, offset: 0, cursor: null });
      const wanted = all.filter((f) => textMatch(f, labels) && keep(f));
      expect(await repo.searchCount(projectA, q), labels.join()).toBe(wanted.length);
      const names = new Set(wanted.slice(0, 100).map((f) => f.originalFilename));
      expect(found.map((f) => f.originalFilename).sort(), labels.join()).toEqual([...names].sort());
      return wanted.length;
    };
    expect(await expectSame(['Object 7'])).toBe(2);
    expect(await expectSame(['OBJECT 7', 'object 70'])).toBe(4);
    expect(await expectSame(['Animal'], { size: { lt: 400 } }, (f) => f.size < 400)).toBeGreaterThan(0);
    expect(await expectSame(['étagère'])).toBeGreaterThan(0);
    expect(await expectSame(['Smoking'])).toBeGreaterThan(0);
    // ParentName is not a Name; part of a name is not the name.
    expect(await expectSame(['Tobacco'])).toBe(0);
    expect(await expectSame(['Object'])).toBe(0);
    expect(await repo.searchCount(projectB, query({ appdata_labels: ['Object 7'] }))).toBe(2);
  });

  it('follows appdata writes in their transaction, and goes with a deleted row', async () => {
    const f = file(projectA, ROWS + 2);
    const count = (label: string) => repo.searchCount(projectA, query({ appdata_labels: [label] }));
    await db.transaction((trx) => repo.insert(trx, { ...f, appdata: { aws_rekognition_detect_labels: entry({ Labels: [{ Name: 'Quokka' }] }) } }));
    expect(await count('quokka')).toBe(1);
    await db.transaction((trx) => repo.setAppdata(trx, projectA, f.uuid, { aws_rekognition_detect_labels: entry({ Labels: [{ Name: 'Wombat' }, { Name: 'Wombat' }] }) }));
    expect(await count('Quokka')).toBe(0);
    expect(await count('Wombat')).toBe(1);
    // A write that fails takes its label rows back with it.
    await expect(db.transaction(async (trx) => {
      await repo.setAppdata(trx, projectA, f.uuid, { x: entry({ Name: 'Platypus' }) });
      throw new Error('rolled back');
    })).rejects.toThrow('rolled back');
    expect(await count('Platypus')).toBe(0);
    expect(await count('Wombat')).toBe(1);
    await db.kysely.deleteFrom('files').where('uuid', '=', f.uuid).execute();
    expect(await count('Wombat')).toBe(0);
    expect(await db.kysely.selectFrom('file_labels').select('uuid').where('uuid', '=', f.uuid).execute()).toEqual([]);
  });
});
