/**
 * Liveness and readiness on every surface, one tier per process (`serve --only`), and readiness
 * failing when the blob store is gone.
 */
import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, usingS3, type ProjectKeys, type TestServer } from '../helpers/server.js';

const started: TestServer[] = [];
let full: TestServer;
let keys: ProjectKeys;

async function start(opts: Parameters<typeof startServer>[0] = {}): Promise<TestServer> {
  // useServer() does not fit: besides one full server, tests start single tiers (`serve --only`) and
  // servers on a broken store; one list stops them all.
  const s = await startServer(opts);
  started.push(s);
  return s;
}

async function uploadBase(upload: string, pub: string, body: Buffer, name = 'a.bin'): Promise<string> {
  const form = new FormData();
  form.set('UPLOADCARE_PUB_KEY', pub);
  form.set('UPLOADCARE_STORE', '1');
  form.set('file', new Blob([body]), name);
  const res = await fetch(`${upload}/base/`, { method: 'POST', body: form });
  expect(res.status).toBe(200);
  return ((await res.json()) as { file: string }).file;
}

const portOf = (url: string) => Number(new URL(url).port);

beforeAll(async () => {
  full = await start();
  keys = await full.createProject();
});
afterAll(async () => {
  for (const s of started) await s.stop();
});

describe('health and readiness', () => {
  it('every surface answers /healthz and /readyz without credentials', async () => {
    for (const base of [full.rest, full.upload, full.cdn]) {
      const live = await fetch(`${base}/healthz`);
      expect(live.status).toBe(200);
      expect(live.headers.get('content-type')).toBe('application/json');
      expect(await live.json()).toEqual({ status: 'ok' });
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready', db: 'ok', blobs: 'ok', disk: 'ok', freeBytes: expect.any(Number), draining: false, inFlight: 0 });
      expect((await fetch(`${base}/readyz`, { method: 'HEAD' })).status).toBe(200);
    }
  });

  it('the probes do not shadow real routes: REST still wants auth, the CDN still 404s unknown paths', async () => {
    expect((await fetch(`${full.rest}/files/`, { headers: { accept: 'application/vnd.uploadcare-v0.7+json' } })).status).toBe(401);
    expect((await fetch(`${full.cdn}/healthzz`)).status).toBe(404);
    expect((await fetch(`${full.cdn}/healthz/x`)).status).toBe(404);
    // POST is not a probe.
    expect((await fetch(`${full.upload}/healthz`, { method: 'POST' })).status).toBe(404);
  });

  it('readiness fails (503) when the blob store is unreachable, liveness does not', async () => {
    let broken: TestServer;
    if (usingS3()) {
      // A bucket that does not exist: the node starts, but is not ready.
      broken = await start({ bucket: `missing-${crypto.randomBytes(4).toString('hex')}` });
    } else {
      broken = await start();
      await fsp.rm(path.join(broken.dataDir, 'blobs'), { recursive: true, force: true });
    }
    const ready = await fetch(`${broken.cdn}/readyz`);
    expect(ready.status).toBe(503);
    const body = (await ready.json()) as Record<string, unknown>;
    expect(body['status']).toBe('unavailable');
    expect(body['db']).toBe('ok');
    expect(body['blobs']).not.toBe('ok');
    expect((await fetch(`${broken.rest}/healthz`)).status).toBe(200);
  });

  it('readiness fails (503, disk "low") when the data dir has less free space than STOWAGE_MIN_FREE_BYTES', async () => {
    const free = ((await (await fetch(`${full.rest}/readyz`)).json()) as { freeBytes: number }).freeBytes;
    expect(free).toBeGreaterThan(0);
    // A minimum above what the disk has: the same node is healthy but must not take traffic.
    const starved = await start({ env: { STOWAGE_MIN_FREE_BYTES: String(free * 2) } });
    for (const base of [starved.rest, starved.upload, starved.cdn]) {
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ status: 'unavailable', db: 'ok', blobs: 'ok', disk: 'low', freeBytes: expect.any(Number) });
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
    }
  });
});

describe('serve --only', () => {
  it('each tier serves only its surface, sharing the stores with the others', async () => {
    const shared = { dataDir: full.dataDir, ...(full.schema ? { schema: full.schema } : {}), ...(full.bucket ? { bucket: full.bucket } : {}) };
    const cdnOnly = await start({ ...shared, args: ['--only', 'cdn'] });
    const uploadOnly = await start({ ...shared, args: ['--only', 'upload'] });
    const restOnly = await start({ ...shared, args: ['--only', 'rest'] });
    // Surfaces a tier does not serve are not bound at all.
    expect(portOf(cdnOnly.rest)).toBe(0);
    expect(portOf(cdnOnly.upload)).toBe(0);
    expect(portOf(uploadOnly.cdn)).toBe(0);
    expect(portOf(restOnly.upload)).toBe(0);

    const body = crypto.randomBytes(5000);
    const uuid = await uploadBase(uploadOnly.upload, keys.public_key, body);
    const got = await fetch(`${cdnOnly.cdn}/${uuid}/`);
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer()).equals(body)).toBe(true);
    for (const base of [cdnOnly.cdn, uploadOnly.upload, restOnly.rest]) expect((await fetch(`${base}/readyz`)).status).toBe(200);
    // The REST tier answers REST (auth required), and the upload tier does not serve the CDN.
    expect((await fetch(`${restOnly.rest}/files/`, { headers: { accept: 'application/vnd.uploadcare-v0.7+json' } })).status).toBe(401);
    expect((await fetch(`${uploadOnly.upload}/${uuid}/`)).status).toBe(404);
  });
});
