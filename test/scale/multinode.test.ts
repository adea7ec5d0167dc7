/**
 * Many nodes behave as one: two server processes with their own data dirs on one PostgreSQL
 * schema, one S3-compatible endpoint (s3rver) and Redis, started with the settings of
 * deploy/stowage.env (the compose file's). Upload on A; read, transform and delete on B; webhooks
 * and expiry run once; a node killed with SIGKILL loses nothing it acknowledged; the official
 * SDK's multipart upload goes straight to the bucket; one render per key across nodes.
 *
 * PostgreSQL only (several processes on one SQLite file is not a supported deployment).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { uploadFile } from '@uploadcare/upload-client';
import pg from 'pg';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startServer, testS3, usingPostgres, type ProjectKeys, type TestServer } from '../helpers/server.js';
import { restClient, uploadBase } from '../helpers/rest.js';
import type { TestS3 } from '../helpers/s3.js';
import { eventually, sleep, startReceiver, type Receiver } from '../webhooks/receiver.js';

const pgOnly = usingPostgres();
const REDIS_URL = process.env['STOWAGE_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** deploy/stowage.env, parsed: KEY=value lines; keys preceded by an "# address" comment are substituted. */
function deployEnv(): { values: Record<string, string>; addresses: Set<string> } {
  const values: Record<string, string> = {};
  const addresses = new Set<string>();
  let address = false;
  for (const line of fs.readFileSync(path.join(ROOT, 'deploy', 'stowage.env'), 'utf8').split('\n')) {
    if (/^#\s*address\b/.test(line)) address = true;
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (!m) continue;
    values[m[1] as string] = m[2] as string;
    if (address) addresses.add(m[1] as string);
    address = false;
  }
  return { values, addresses };
}

/** The deployment env with this machine's service addresses. */
function nodeEnv(s3: TestS3, bucket: string): Record<string, string> {
  const { values, addresses } = deployEnv();
  const local: Record<string, string> = {
    STOWAGE_DATABASE_URL: process.env['STOWAGE_DATABASE_URL'] as string,
    STOWAGE_REDIS_URL: REDIS_URL,
    ...s3.env(bucket),
  };
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(values)) {
    if (addresses.has(k)) {
      if (!(k in local)) throw new Error(`no local address for ${k}`);
      env[k] = local[k] as string;
    } else env[k] = v;
  }
  return {
    ...env,
    // Test-only: the webhook receiver is on loopback; short expiry and polling so the test is quick.
    STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8',
    STOWAGE_UNSTORED_TTL_MS: '3000',
    STOWAGE_EXPIRY_SWEEP_MS: '500',
    STOWAGE_JOB_POLL_MS: '100',
  };
}

let s3: TestS3;
let bucket: string;
let env: Record<string, string>;
let a: TestServer;
let b: TestServer;
let keys: ProjectKeys;
let receiver: Receiver;
const extra: TestServer[] = [];

// useServer() does not fit: several nodes share one store, and one is killed with SIGKILL.
beforeAll(async () => {
  if (!pgOnly) return;
  s3 = await testS3();
  bucket = await s3.createBucket();
  env = nodeEnv(s3, bucket);
  receiver = await startReceiver();
  a = await startServer({ env, bucket });
  // Its own data dir: nothing is shared but PostgreSQL, the bucket and Redis.
  b = await startServer({ env, bucket, ...(a.schema ? { schema: a.schema } : {}) });
  expect(b.dataDir).not.toBe(a.dataDir);
  keys = await a.createProject();
  const call = restClient(a.rest, keys);
  const form = new URLSearchParams({ target_url: receiver.url, event: 'file.uploaded' }).toString();
  expect((await call('POST', '/webhooks/', { body: form, contentType: 'application/x-www-form-urlencoded' })).status).toBe(201);
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop(), ...extra.map((s) => s.stop())]);
  await receiver?.close();
});

const objectExists = async (key: string) =>
  s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).then(
    () => true,
    () => false,
  );

describe.skipIf(!pgOnly)('two stateless nodes', () => {
  it('starts every node with exactly the deployment settings of deploy/stowage.env', () => {
    const { values } = deployEnv();
    for (const k of Object.keys(values)) expect(a.env[k], k).toBe(env[k]);
    expect(a.env['STOWAGE_S3_BUCKET']).toBe(bucket);
    expect(a.env['STOWAGE_REDIS_URL']).toBe(REDIS_URL);
  });

  it('upload on A; read, transform, inspect and delete on B', async () => {
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#c03' } }).png().toBuffer();
    const up = await uploadBase(a.upload, keys.public_key, [{ name: 'red.png', data: png }], { UPLOADCARE_STORE: '1' });
    expect(up.status).toBe(200);
    const uuid = up.json.file as string;
    // The bytes are in the bucket, not in A's data dir.
    expect(await objectExists(`files/${uuid.slice(0, 2)}/${uuid}`)).toBe(true);
    expect(fs.existsSync(path.join(a.dataDir, 'blobs', 'files', uuid.slice(0, 2), uuid))).toBe(false);

    const raw = await fetch(`${b.cdn}/${uuid}/`);
    expect(raw.status).toBe(200);
    expect(Buffer.from(await raw.arrayBuffer()).equals(png)).toBe(true);
    const range = await fetch(`${b.cdn}/${uuid}/`, { headers: { range: 'bytes=1-3' } });
    expect(range.status).toBe(206);
    expect(Buffer.from(await range.arrayBuffer()).equals(png.subarray(1, 4))).toBe(true);

    const small = await fetch(`${b.cdn}/${uuid}/-/resize/32x/-/format/png/`);
    expect(small.status).toBe(200);
    const meta = await sharp(Buffer.from(await small.arrayBuffer())).metadata();
    expect([meta.width, meta.height]).toEqual([32, 24]);

    const callB = restClient(b.rest, keys);
    const info = await callB('GET', `/files/${uuid}/`);
    expect(info.status).toBe(200);
    expect(info.json).toMatchObject({ uuid, size: png.length, is_image: true, mime_type: 'image/png' });
    expect((await callB('DELETE', `/files/${uuid}/storage/`)).status).toBe(200);
    // Both nodes stop serving it (A's short row cache expires within seconds) and the bytes go.
    await eventually(async () => (await fetch(`${a.cdn}/${uuid}/`)).status === 404, 15_000, 'A stops serving the removed file');
    expect((await fetch(`${b.cdn}/${uuid}/`)).status).toBe(404);
    await eventually(async () => !(await objectExists(`files/${uuid.slice(0, 2)}/${uuid}`)), 15_000, 'bytes reclaimed from the bucket');
  });

  it('delivers each webhook once and runs each expiry once', async () => {
    const before = receiver.received.length;
    const uuids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await uploadBase((i % 2 ? b : a).upload, keys.public_key, [{ name: `t${i}.txt`, data: `temporary ${i}` }], { UPLOADCARE_STORE: '0' });
      expect(r.status).toBe(200);
      uuids.push(r.json.file as string);
    }
    const ours = new Set(uuids);
    await eventually(async () => receiver.received.filter((r) => ours.has(r.json?.data?.uuid)).length >= uuids.length, 30_000, 'deliveries');
    const call = restClient(b.rest, keys);
    for (const uuid of uuids) {
      await eventually(async () => (await call('GET', `/files/${uuid}/`)).json.datetime_removed !== null, 30_000, `expiry of ${uuid}`);
    }
    await sleep(1500); // let a duplicate delivery or a second expiry show up before counting
    const delivered = receiver.received.slice(before).map((r) => r.json?.data?.uuid as string).filter((u) => ours.has(u));
    expect(delivered.sort()).toEqual([...uuids].sort());
    const pgc = new pg.Client({ connectionString: process.env['STOWAGE_DATABASE_URL'], options: `-c search_path=${a.schema}` });
    await pgc.connect();
    try {
      for (const uuid of uuids) {
        const { rows } = await pgc.query("SELECT id FROM jobs WHERE kind = 'blob.delete' AND payload LIKE $1", [`%${uuid}%`]);
        expect(rows, uuid).toHaveLength(1);
      }
    } finally {
      await pgc.end();
    }
    for (const uuid of uuids) await eventually(async () => !(await objectExists(`files/${uuid.slice(0, 2)}/${uuid}`)), 15_000, `bytes of ${uuid}`);
  });

  it('loses nothing it acknowledged when a node is killed with SIGKILL mid-request', async () => {
    const c = await startServer({ env, bucket, ...(a.schema ? { schema: a.schema } : {}) });
    extra.push(c);
    const project = await c.createProject();
    const acked = new Map<string, Buffer>();
    let stop = false;
    const worker = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const data = crypto.randomBytes(200_000 + w * 1000 + i);
        const r = await uploadBase(c.upload, project.public_key, [{ name: `k${w}-${i}.bin`, data }], { UPLOADCARE_STORE: '1' }).catch(() => null);
        if (!r) return;
        if (r.status === 200) acked.set(r.json.file as string, data);
      }
    };
    const workers = [0, 1, 2, 3].map(worker);
    await eventually(async () => acked.size >= 6, 60_000, 'some uploads acknowledged');
    await c.kill();
    stop = true;
    await Promise.all(workers);
    expect(c.child.signalCode).toBe('SIGKILL');
    for (const [uuid, data] of acked) {
      const r = await fetch(`${b.cdn}/${uuid}/`);
      expect(r.status, uuid).toBe(200);
      expect(Buffer.from(await r.arrayBuffer()).equals(data)).toBe(true);
    }
    // And no row points at missing bytes: every listed file is deliverable.
    const list = await restClient(b.rest, project)('GET', '/files/?limit=100');
    expect(list.status).toBe(200);
    for (const f of list.json.results as Array<{ uuid: string }>) expect((await fetch(`${b.cdn}/${f.uuid}/`, { method: 'HEAD' })).status, f.uuid).toBe(200);
  });

  it("sends the official SDK's multipart upload straight to the bucket", async () => {
    const data = crypto.randomBytes(11 * 1024 * 1024 + 17);
    // Part URLs point at the object store, not at a node.
    const start = await fetch(`${a.upload}/multipart/start/`, {
      method: 'POST',
      body: new URLSearchParams({ UPLOADCARE_PUB_KEY: keys.public_key, filename: 'probe.bin', size: String(data.length), content_type: 'application/octet-stream' }),
    });
    const started = (await start.json()) as { uuid: string; parts: string[] };
    expect(started.parts).toHaveLength(3);
    for (const u of started.parts) expect(u.startsWith(`${s3.endpoint}/${bucket}/files/`)).toBe(true);
    expect((await fetch(`${a.upload}/multipart/upload/${started.uuid}/1/`, { method: 'PUT', body: 'x' })).status).toBe(404);

    const file = await uploadFile(data, { publicKey: keys.public_key, baseURL: a.upload, baseCDN: b.cdn, fileName: 'eleven.bin', contentType: 'application/octet-stream', store: true, multipartMinFileSize: 10 * 1024 * 1024, maxConcurrentRequests: 3 });
    expect(file.size).toBe(data.length);
    const got = await fetch(`${b.cdn}/${file.uuid}/`);
    expect(Buffer.from(await got.arrayBuffer()).equals(data)).toBe(true);
    expect(got.headers.get('etag')).toBe(`"${crypto.createHash('md5').update(data).digest('hex')}"`);
    // The probe upload above was never completed; its expiry aborts the S3 upload (s3rver shim).
  });

  it('renders a new transformation once across nodes (Redis lock, shared results in the bucket)', async () => {
    const png = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#0a6' } }).png().toBuffer();
    const up = await uploadBase(a.upload, keys.public_key, [{ name: 'green.png', data: png }], { UPLOADCARE_STORE: '1' });
    const uuid = up.json.file as string;
    const url = (n: TestServer) => `${n.cdn}/${uuid}/-/blur/40/-/resize/300x/-/format/png/`;
    const responses = await Promise.all(Array.from({ length: 8 }, (_x, i) => fetch(url(i % 2 ? b : a))));
    const states = responses.map((r) => r.headers.get('x-stowage-cache'));
    const bodies = await Promise.all(responses.map(async (r) => Buffer.from(await r.arrayBuffer())));
    expect(responses.every((r) => r.status === 200)).toBe(true);
    expect(states.filter((s) => s === 'miss')).toHaveLength(1);
    expect(new Set(bodies.map((x) => x.toString('base64'))).size).toBe(1);
    const key = (await fs.promises.readdir(path.join(s3.directory, bucket))).includes('cache');
    expect(key).toBe(true);
  });
});
