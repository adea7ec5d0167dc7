/**
 * Leftovers of a crash are reclaimed: a server killed (SIGKILL) during many uploads leaves partial
 * temp files and blobs no row references; after a restart the periodic sweep removes every one
 * older than the configured age (and only those), while every acknowledged upload stays intact.
 * Runs against the data dir (fs) or the bucket (STOWAGE_TEST_S3=1).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { blobExists, startServer, testS3, type TestServer } from '../helpers/server.js';
import { restClient, uploadBase } from '../helpers/rest.js';

const MIN_AGE_MS = 6000;
const servers: TestServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function listKeys(server: TestServer, prefix: string): Promise<string[]> {
  if (!server.bucket) {
    const root = path.join(server.dataDir, 'blobs');
    const dir = path.join(root, prefix);
    if (!fs.existsSync(dir)) return [];
    return (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
      .filter((e) => e.isFile())
      .map((e) => path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
  }
  const { ListObjectsV2Command } = await import('@aws-sdk/client-s3');
  const out = await (await testS3()).client.send(new ListObjectsV2Command({ Bucket: server.bucket, Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key as string);
}

/** Writes a blob behind the server's back; `old` backdates it (fs only: S3 stamps its own time). */
async function plantBlob(server: TestServer, key: string, old: boolean): Promise<void> {
  const bytes = crypto.randomBytes(1000);
  if (!server.bucket) {
    const file = path.join(server.dataDir, 'blobs', key);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, bytes);
    if (old) fs.utimesSync(file, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
    return;
  }
  const { PutObjectCommand } = await import('@aws-sdk/client-s3');
  await (await testS3()).client.send(new PutObjectCommand({ Bucket: server.bucket, Key: key, Body: bytes }));
}

/** The node's own temp folder: partial writes (fs) or local copies of blobs (S3). */
const tempDir = (server: TestServer) => (server.bucket ? path.join(server.dataDir, 'spool') : path.join(server.dataDir, 'blobs', '.tmp'));
const tempFiles = (server: TestServer) => (fs.existsSync(tempDir(server)) ? fs.readdirSync(tempDir(server)) : []);

const keyOf = (prefix: string, uuid: string, rest = '') => `${prefix}${uuid.slice(0, 2)}/${uuid}${rest}`;

describe('leftovers after a crash', () => {
  it('SIGKILL during uploads, restart: the sweep removes old temp files and blobs without a row, keeps young ones and every acknowledged file', async () => {
    // useServer() does not fit: the server is killed (SIGKILL) and restarted on its data dir.
    const first = await startServer();
    servers.push(first);
    const keys = await first.createProject();
    const acknowledged = new Map<string, string>();
    let killed = false;
    // 40 distinct bodies over 150 uploads: most uploads share their bytes with another (the kill
    // also lands between a shared row's commit and the removal of its staged duplicate).
    const bodies = Array.from({ length: 40 }, (_, i) => crypto.randomBytes(50_000 + i * 1499));
    const uploads = Array.from({ length: 150 }, (_, i) => bodies[i % bodies.length]!).map(async (data, i) => {
      try {
        const r = await uploadBase(first.upload, keys.public_key, [{ name: `f${i}.bin`, data }], { UPLOADCARE_STORE: '1' });
        if (r.status === 200 && !killed) acknowledged.set(r.json.file, crypto.createHash('md5').update(data).digest('hex'));
      } catch {
        // Connection reset by the kill.
      }
    });
    while (acknowledged.size < 20) await sleep(5);
    await first.kill();
    killed = true;
    await Promise.all(uploads);

    // Besides whatever the kill left, one of each kind of leftover for certain.
    const orphanFile = keyOf('files/', crypto.randomUUID());
    const orphanPart = keyOf('multipart/', crypto.randomUUID(), '/1');
    await plantBlob(first, orphanFile, true);
    await plantBlob(first, orphanPart, true);
    // Keys the sweep has no owner for (the shared CDN results) or cannot read a uuid from stay.
    const unowned = ['cache/ab/abcdef', 'files/zz/not-a-uuid'];
    for (const k of unowned) await plantBlob(first, k, true);
    fs.mkdirSync(tempDir(first), { recursive: true });
    const staleTemp = path.join(tempDir(first), `${crypto.randomUUID()}.part`);
    fs.writeFileSync(staleTemp, crypto.randomBytes(1000));
    fs.utimesSync(staleTemp, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
    const leftBehind = tempFiles(first).length;
    expect(leftBehind).toBeGreaterThan(0);

    const restarted = await startServer({
      dataDir: first.dataDir,
      ...(first.schema ? { schema: first.schema } : {}),
      ...(first.bucket ? { bucket: first.bucket } : {}),
      env: {
        STOWAGE_LEFTOVERS_MIN_AGE_MS: String(MIN_AGE_MS),
        STOWAGE_LEFTOVERS_SWEEP_MS: '500',
        STOWAGE_UPLOAD_REQUEST_TIMEOUT_MS: '5000',
        STOWAGE_FROM_URL_TIMEOUT_MS: '5000',
      },
    });
    servers.push(restarted);
    const call = restClient(restarted.rest, keys);
    const rows = new Set<string>();
    let url: string | null = '/files/?limit=1000';
    while (url) {
      const r = await call('GET', url);
      for (const f of r.json.results as Array<{ uuid: string }>) rows.add(f.uuid);
      url = r.json.next ? new URL(r.json.next).pathname + new URL(r.json.next).search : null;
    }
    const orphans = async () => [
      ...(await listKeys(restarted, 'files/')).filter((k) => !rows.has(k.split('/').pop() as string) && !unowned.includes(k)),
      ...(await listKeys(restarted, 'multipart/')),
    ];

    const deadline = Date.now() + MIN_AGE_MS + 30_000;
    while (((await orphans()).length > 0 || tempFiles(restarted).length > 0) && Date.now() < deadline) await sleep(250);
    expect(await orphans()).toEqual([]);
    expect(tempFiles(restarted)).toEqual([]);

    for (const k of unowned) expect(await blobExists(restarted, k), k).toBe(true);

    // Young keys are left alone: they may belong to an upload about to commit its row.
    const young = keyOf('files/', crypto.randomUUID());
    await plantBlob(restarted, young, false);
    await sleep(2000);
    expect(await blobExists(restarted, young)).toBe(true);
    const gone = Date.now() + MIN_AGE_MS + 20_000;
    while ((await blobExists(restarted, young)) && Date.now() < gone) await sleep(250);
    expect(await blobExists(restarted, young)).toBe(false);

    // Every acknowledged upload is intact, and every row still has its bytes.
    for (const uuid of acknowledged.keys()) expect(rows.has(uuid)).toBe(true);
    for (const uuid of rows) {
      const r = await fetch(`${restarted.cdn}/${uuid}/`);
      expect(r.status).toBe(200);
      const md5 = crypto.createHash('md5').update(Buffer.from(await r.arrayBuffer())).digest('hex');
      const expected = acknowledged.get(uuid);
      if (expected) expect(md5).toBe(expected);
    }
  }, 180_000);
});
