/**
 * Digests after the answer (src/files/digest-later.ts, STOWAGE_DIGEST_LATER_BYTES): a body on disk
 * declared at least that large is answered before its MD5 and SHA-256 are computed; a `file.digest`
 * job then gives the row its MD5 (the CDN's ETag) and its content address, and a duplicate's row
 * moves to the project's blob with those bytes while its own copy is deleted after a grace period.
 * Smaller bodies keep their digests at the answer. With S3 the store hashes while streaming, so
 * nothing is left for later. Runs on SQLite or PostgreSQL, disk or S3.
 */
import crypto from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobExists, usingPostgres, usingS3 } from '../helpers/server.js';
import { haveStrace, traced } from '../helpers/strace.js';
import { useServer } from '../helpers/use-server.js';
import { uploadBase } from '../helpers/rest.js';
import { fileRows, type FileRow } from '../reliability/audit.js';
import { get, postForm, postQuery, until } from './helpers.js';
import { startOrigin, type Origin } from './origin.js';
import { tusUpload } from '../tus/helpers.js';

const MiB = 1024 * 1024;
const LATER = 8 * MiB;
const remote = crypto.randomBytes(LATER + 5555);
let origin: Origin;
beforeAll(async () => {
  origin = await startOrigin(remote);
});
afterAll(() => origin?.close());
const srv = useServer({ env: { STOWAGE_DIGEST_LATER_BYTES: String(LATER), STOWAGE_OUTBOUND_ALLOW: '127.0.0.1/32' } });

const md5 = (b: Buffer) => crypto.createHash('md5').update(b).digest('hex');
const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');
const onDisk = () => !srv.server.bucket;

/** Rows of one query against the server's store (its SQLite file or its PostgreSQL schema). */
async function query<T>(sqlite: string, postgres: string, params: unknown[]): Promise<T[]> {
  if (usingPostgres()) {
    const client = new pg.Client({ connectionString: process.env['STOWAGE_DATABASE_URL'] });
    await client.connect();
    try {
      await client.query(`SET search_path TO "${srv.server.schema}"`);
      return (await client.query(postgres, params)).rows as T[];
    } finally {
      await client.end();
    }
  }
  const db = new Database(path.join(srv.server.dataDir, 'stowage.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sqlite).all(...params) as T[];
  } finally {
    db.close();
  }
}

const contentKey = async (digest: string) =>
  (await query<{ blob_key: string }>('SELECT blob_key FROM file_contents WHERE sha256 = ?', 'SELECT blob_key FROM file_contents WHERE sha256 = $1', [digest]))[0]?.blob_key ?? null;

interface JobRow {
  kind: string;
  payload: string;
  state: string;
  run_at_us: number;
}
const jobsOf = (kind: string) =>
  query<JobRow>('SELECT kind, payload, state, run_at_us FROM jobs WHERE kind = ?', 'SELECT kind, payload, state, run_at_us::float8 AS run_at_us FROM jobs WHERE kind = $1', [kind]);

async function rowOf(uuid: string): Promise<FileRow> {
  const row = (await fileRows(srv.server)).find((r) => r.uuid === uuid);
  if (!row) throw new Error(`no row for ${uuid}`);
  return row;
}

async function upload(name: string, data: Buffer): Promise<string> {
  const r = await uploadBase(srv.upload, srv.keys.public_key, [{ name, data }], { UPLOADCARE_STORE: '1' });
  expect(r.status, r.text).toBe(200);
  return r.json.file as string;
}

/**
 * The states of the file's digest jobs once none is still waiting or running: the job writes the
 * row's digests in its own transaction and its completion commits after, with its group.
 */
const settledDigestJobs = (uuid: string) =>
  until(async () => {
    const states = (await jobsOf('file.digest')).filter((j) => (JSON.parse(j.payload) as { uuid: string }).uuid === uuid).map((j) => j.state);
    return states.some((s) => s === 'pending' || s === 'running') ? undefined : states;
  }, 30_000, 100);

/** The row once its MD5 is there (at the answer, or after the job). */
const digested = (uuid: string) => until(async () => ((await rowOf(uuid)).md5 !== '' ? rowOf(uuid) : undefined), 30_000, 100);

/** Starts a multipart upload and sends its parts; answers its uuid, ready to complete. */
async function sendParts(data: Buffer, partSize: number): Promise<string> {
  const s = await postForm(`${srv.upload}/multipart/start/`, {
    UPLOADCARE_PUB_KEY: srv.keys.public_key,
    filename: 'parts.bin',
    size: String(data.length),
    part_size: String(partSize),
    content_type: 'application/octet-stream',
    UPLOADCARE_STORE: '1',
  });
  expect(s.status, s.text).toBe(200);
  const urls = s.json.parts as string[];
  for (const [n, url] of urls.entries()) {
    const r = await fetch(url, { method: 'PUT', body: data.subarray(n * partSize, (n + 1) * partSize) });
    expect(r.status).toBe(200);
    await r.arrayBuffer();
  }
  return s.json.uuid as string;
}

async function complete(uuid: string): Promise<void> {
  const done = await postForm(`${srv.upload}/multipart/complete/`, { UPLOADCARE_PUB_KEY: srv.keys.public_key, uuid });
  expect(done.status, done.text).toBe(200);
}

async function multipart(data: Buffer, partSize: number): Promise<string> {
  const uuid = await sendParts(data, partSize);
  await complete(uuid);
  return uuid;
}

describe('digests after the answer (large bodies on disk)', () => {
  it('a direct body past the threshold: served at once, its MD5 and content address filled in by the job', async () => {
    const data = crypto.randomBytes(LATER + 12_345);
    const uuid = await upload('late.bin', data);
    const first = await fetch(`${srv.cdn}/${uuid}/`);
    expect(first.status).toBe(200);
    expect(Buffer.from(await first.arrayBuffer()).equals(data)).toBe(true);
    // Before the job, no validator; never a wrong one.
    const early = first.headers.get('etag');
    if (early !== null) expect(early).toBe(`"${md5(data)}"`);

    const row = await digested(uuid);
    expect(row.md5).toBe(md5(data));
    expect(await contentKey(sha256(data))).toBe(row.blob_key);
    // On disk the job ran; S3 hashed while streaming and left none.
    expect(await settledDigestJobs(uuid)).toEqual(onDisk() ? ['done'] : []);
    const etag = await until(async () => {
      const r = await fetch(`${srv.cdn}/${uuid}/`, { method: 'HEAD' });
      return r.headers.get('etag') ?? undefined;
    }, 10_000, 250);
    expect(etag).toBe(`"${md5(data)}"`);
  });

  it('a body below the threshold has its MD5 at the answer, and no job', async () => {
    const data = crypto.randomBytes(LATER - 64 * 1024);
    const uuid = await upload('now.bin', data);
    expect((await rowOf(uuid)).md5).toBe(md5(data));
    expect((await jobsOf('file.digest')).some((j) => (JSON.parse(j.payload) as { uuid: string }).uuid === uuid)).toBe(false);
  });

  it('a duplicate moves to the project\'s blob once digested; its own copy is deleted only after the grace period', async () => {
    const data = crypto.randomBytes(LATER + 777);
    const a = await digested(await upload('a.bin', data));
    const b = await digested(await upload('b.bin', data));
    expect(b.blob_key).toBe(a.blob_key);
    expect(b.md5).toBe(md5(data));
    const r = await fetch(`${srv.cdn}/${b.uuid}/`);
    expect(Buffer.from(await r.arrayBuffer()).equals(data)).toBe(true);
    if (!onDisk()) return; // S3: deduplicated at the commit (digests while streaming)
    const ownKey = `files/${b.uuid.slice(0, 2)}/${b.uuid}`;
    expect(ownKey).not.toBe(a.blob_key);
    // The copy is still there for readers that hold the old row, and its deletion is scheduled.
    expect(await blobExists(srv.server, ownKey)).toBe(true);
    const deletes = (await jobsOf('blob.delete')).filter((j) => (JSON.parse(j.payload) as { blobKey: string }).blobKey === ownKey);
    expect(deletes).toHaveLength(1);
    expect(deletes[0]!.state).toBe('pending');
    expect(deletes[0]!.run_at_us).toBeGreaterThan(Date.now() * 1000 + 50_000_000);
  });

  it('a multipart upload past the threshold: completion answers, the job fills in MD5 and content address', async () => {
    const data = crypto.randomBytes(2 * 5 * MiB + 4321);
    const uuid = await multipart(data, 5 * MiB);
    const row = await digested(uuid);
    expect(row.md5).toBe(md5(data));
    expect(await contentKey(sha256(data))).toBe(row.blob_key);
    const r = await fetch(`${srv.cdn}/${uuid}/`);
    expect(r.headers.get('etag')).toBe(`"${md5(data)}"`);
    expect(Buffer.from(await r.arrayBuffer()).equals(data)).toBe(true);
  });

  it('a tus upload past the threshold: finished at once, digested by the job', async () => {
    const data = crypto.randomBytes(LATER + 4096);
    const r = await tusUpload(data, { endpoint: `${srv.upload}/tus/`, chunkSize: 4 * MiB, metadata: { UPLOADCARE_PUB_KEY: srv.keys.public_key, filename: 'tus.bin', UPLOADCARE_STORE: '1' } });
    const uuid = r.fileUuid as string;
    expect(uuid).toMatch(/^[0-9a-f-]{36}$/);
    const row = await digested(uuid);
    expect(row.md5).toBe(md5(data));
    expect(await contentKey(sha256(data))).toBe(row.blob_key);
    expect(await settledDigestJobs(uuid)).toEqual(onDisk() ? ['done'] : []);
  });

  it('a from_url download declared past the threshold: success at once, digested by the job', async () => {
    const start = await postQuery(`${srv.upload}/from_url/`, { pub_key: srv.keys.public_key, source_url: `${origin.url}/plain/data.bin`, store: '1' });
    expect(start.status, start.text).toBe(200);
    const done = await until(async () => {
      const r = await get(`${srv.upload}/from_url/status/?token=${encodeURIComponent(start.json.token as string)}`);
      return r.json.status === 'success' || r.json.status === 'error' ? r : undefined;
    });
    expect(done.json.status, done.text).toBe('success');
    const uuid = done.json.uuid as string;
    const row = await digested(uuid);
    expect(row.md5).toBe(md5(remote));
    expect(await contentKey(sha256(remote))).toBe(row.blob_key);
    expect(await settledDigestJobs(uuid)).toEqual(onDisk() ? ['done'] : []);
  });

  // The digest threads read with pread64; while parts arrive no other thread but the main one
  // (SQLite's pages) preads anything. Before: the running digest read each part back, and each
  // part's marker (a few bytes of JSON, written beside and renamed) was hashed too, which woke a
  // digest thread for nothing.
  it.skipIf(!haveStrace || usingS3())('nothing is hashed while a large multipart upload\'s parts arrive', async () => {
    const data = crypto.randomBytes(2 * 5 * MiB + 99);
    let uuid = '';
    const lines = await traced(srv.server.child.pid as number, ['-y', '-e', 'trace=pread64'], async () => {
      uuid = await sendParts(data, 5 * MiB);
    });
    expect(uuid).not.toBe('');
    const pid = srv.server.child.pid as number;
    expect(lines.filter((l) => l.includes('pread64') && !l.startsWith(`${pid} `))).toEqual([]);
    await complete(uuid);
    expect((await digested(uuid)).md5).toBe(md5(data));
  });

  it('a file removed before its digests: the job leaves it alone and its bytes are reclaimed', async () => {
    const data = crypto.randomBytes(LATER + 99);
    const uuid = await upload('gone.bin', data);
    const ownKey = (await rowOf(uuid)).blob_key as string;
    const del = await srv.call('DELETE', `/files/${uuid}/storage/`);
    expect(del.status, del.text).toBe(200);
    await until(async () => ((await blobExists(srv.server, ownKey)) ? undefined : true), 30_000, 100);
    await until(async () => ((await jobsOf('file.digest')).every((j) => j.state === 'done' || j.state === 'dead') ? true : undefined), 30_000, 100);
    const row = await rowOf(uuid);
    expect(row.removed_us).not.toBeNull();
    expect(row.blob_key).toBeNull();
    expect(await contentKey(sha256(data))).toBeNull();
    expect((await jobsOf('file.digest')).filter((j) => j.state === 'dead')).toEqual([]);
  });
});
