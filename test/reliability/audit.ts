/**
 * Invariants of a data dir, read from the outside: the metadata store (SQLite file or PostgreSQL
 * schema, read directly) against the blob directory. A live file row must have its bytes with the
 * recorded MD5; bytes without a row (orphan blobs) and temp files are leftovers.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { usingPostgres, type TestServer } from '../helpers/server.js';

export interface FileRow {
  uuid: string;
  blob_key: string | null;
  size: number;
  md5: string;
  removed_us: number | null;
}

export interface Audit {
  rows: number;
  /** Live rows whose blob is missing, short or has other bytes. */
  rowsWithoutBytes: Array<{ uuid: string; problem: string }>;
  /** Blobs under files/ that no row points at. */
  orphanBlobs: string[];
  /** Multipart part blobs whose upload is gone or done. */
  orphanParts: string[];
  /** Files in the blob store's temp dir, and their bytes. */
  tempFiles: number;
  tempBytes: number;
}

type DirLike = Pick<TestServer, 'dataDir' | 'schema'>;

export async function fileRows(server: DirLike): Promise<FileRow[]> {
  if (usingPostgres()) {
    const client = new pg.Client({ connectionString: process.env['STOWAGE_DATABASE_URL'] });
    await client.connect();
    try {
      const { rows } = await client.query<FileRow>(`SELECT uuid, blob_key, size::float8 AS size, md5, removed_us::float8 AS removed_us FROM "${server.schema}".files`);
      return rows;
    } finally {
      await client.end();
    }
  }
  const db = new Database(path.join(server.dataDir, 'stowage.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT uuid, blob_key, size, md5, removed_us FROM files').all() as FileRow[];
  } finally {
    db.close();
  }
}

async function openUploads(server: DirLike): Promise<Set<string>> {
  const q = "SELECT uuid FROM multipart_uploads WHERE state <> 'done'";
  if (usingPostgres()) {
    const client = new pg.Client({ connectionString: process.env['STOWAGE_DATABASE_URL'] });
    await client.connect();
    try {
      return new Set((await client.query<{ uuid: string }>(q.replace('multipart_uploads', `"${server.schema}".multipart_uploads`))).rows.map((r) => r.uuid));
    } finally {
      await client.end();
    }
  }
  const db = new Database(path.join(server.dataDir, 'stowage.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return new Set((db.prepare(q).all() as Array<{ uuid: string }>).map((r) => r.uuid));
  } finally {
    db.close();
  }
}

function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(p));
    else out.push(p);
  }
  return out;
}

function md5File(file: string): string {
  return crypto.createHash('md5').update(fs.readFileSync(file)).digest('hex');
}

/** Audits a local-disk data dir (the embedded deployment; the suite does not run against S3). */
export async function auditDataDir(server: DirLike): Promise<Audit> {
  const blobRoot = path.join(server.dataDir, 'blobs');
  const rows = await fileRows(server);
  const rowsWithoutBytes: Audit['rowsWithoutBytes'] = [];
  const keys = new Set<string>();
  for (const row of rows) {
    if (row.blob_key) keys.add(row.blob_key);
    if (row.removed_us !== null || !row.blob_key) continue;
    const file = path.join(blobRoot, row.blob_key);
    if (!fs.existsSync(file)) rowsWithoutBytes.push({ uuid: row.uuid, problem: 'blob missing' });
    else if (fs.statSync(file).size !== Number(row.size)) rowsWithoutBytes.push({ uuid: row.uuid, problem: `size ${fs.statSync(file).size} != ${row.size}` });
    // An empty MD5: a large file whose digests a job computes after its answer (files/digest-later.ts).
    else if (row.md5 !== '' && md5File(file) !== row.md5) rowsWithoutBytes.push({ uuid: row.uuid, problem: 'md5 differs' });
  }
  const filesDir = path.join(blobRoot, 'files');
  const orphanBlobs = walk(filesDir).map((f) => path.relative(blobRoot, f)).filter((k) => !keys.has(k));
  const open = await openUploads(server);
  const orphanParts = walk(blobRoot)
    .map((f) => path.relative(blobRoot, f))
    .filter((k) => !k.startsWith('files/') && !k.startsWith('.tmp/') && /[0-9a-f]{8}-[0-9a-f]{4}-/.test(k))
    .filter((k) => ![...open].some((uuid) => k.includes(uuid)));
  const temps = walk(path.join(blobRoot, '.tmp'));
  return {
    rows: rows.length,
    rowsWithoutBytes,
    orphanBlobs,
    orphanParts,
    tempFiles: temps.length,
    tempBytes: temps.reduce((n, f) => n + (fs.existsSync(f) ? fs.statSync(f).size : 0), 0),
  };
}
