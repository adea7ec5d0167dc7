/**
 * Per-project throttling on REST and Upload: 429 with Retry-After in each surface's wire form, and
 * the official SDKs' own retry logic getting through once the bucket refills.
 */
import { listOfFiles, UploadcareAuthSchema } from '@uploadcare/rest-client';
import { uploadFile } from '@uploadcare/upload-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ProjectKeys } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { restClient } from '../helpers/rest.js';
import type { Res } from '../helpers/http.js';
import { get, until } from './helpers.js';
import { startProxy } from './proxy.js';

const srv = useServer({
  env: { STOWAGE_RATE_REST_PER_SEC: '1', STOWAGE_RATE_REST_BURST: '3', STOWAGE_RATE_UPLOAD_PER_SEC: '1', STOWAGE_RATE_UPLOAD_BURST: '3' },
});
let a: ProjectKeys;
let b: ProjectKeys;

beforeAll(async () => {
  a = await srv.server.createProject();
  b = await srv.server.createProject();
});

/** Calls until one is throttled; returns it (a burst of 3 means the 4th at the latest, give or take a refill). */
async function drain(call: () => Promise<Res>): Promise<Res> {
  for (let i = 0; i < 20; i++) {
    const r = await call();
    if (r.status === 429 || r.json?.error?.status_code === 429) return r;
  }
  throw new Error('never throttled');
}

describe('REST', () => {
  it('answers 429 with Retry-After and the detail text, per project', async () => {
    const callA = restClient(srv.rest, a);
    const r = await drain(() => callA('GET', '/project/'));
    expect(r.status).toBe(429);
    const after = Number(r.headers.get('retry-after'));
    expect(Number.isInteger(after) && after >= 1).toBe(true);
    expect(r.json).toEqual({ detail: `Request was throttled. Expected available in ${after} seconds.` });
    // Another project has its own bucket.
    expect((await restClient(srv.rest, b)('GET', '/project/')).status).toBe(200);
    // And the bucket refills.
    await until(async () => ((await callA('GET', '/project/')).status === 200 ? true : undefined), 10_000, 500);
  });

  it('lets @uploadcare/rest-client retry through a 429', async () => {
    const callB = restClient(srv.rest, b);
    await drain(() => callB('GET', '/project/'));
    const settings = { authSchema: new UploadcareAuthSchema({ publicKey: b.public_key, secretKey: b.secret_key }), apiBaseURL: srv.rest, retryThrottledRequestMaxTimes: 5 };
    const list = await listOfFiles({}, settings);
    expect(list.results).toEqual([]);
    await until(async () => ((await callB('GET', '/project/')).status === 200 ? true : undefined), 10_000, 500);
  });
});

describe('Upload API', () => {
  const info = (keys: ProjectKeys, q = '') => get(`${srv.upload}/info/?pub_key=${keys.public_key}&file_id=${crypto.randomUUID()}${q}`, { origin: 'https://app.example' });

  it('answers RequestThrottledError with Retry-After, plain and jsonerrors, exposed to browsers', async () => {
    const plain = await drain(() => info(a));
    expect([plain.status, plain.text]).toEqual([429, 'Request was throttled.']);
    expect(Number(plain.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(plain.headers.get('access-control-expose-headers')).toMatch(/Retry-After/i);
    const json = await drain(() => info(a, '&jsonerrors=1'));
    expect(json.status).toBe(200);
    expect(json.json).toEqual({ error: { status_code: 429, content: 'Request was throttled.', error_code: 'RequestThrottledError' } });
    expect(Number(json.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Project b is not affected by a's bucket.
    expect((await info(b)).status).toBe(404);
  });

  it('lets @uploadcare/upload-client retry through a throttled upload', async () => {
    const proxy = await startProxy();
    proxy.setTarget(srv.upload);
    await drain(() => info(b));
    const file = await uploadFile(Buffer.from('throttled but patient'), {
      publicKey: b.public_key,
      baseURL: proxy.url,
      baseCDN: srv.cdn,
      fileName: 'patient.txt',
      retryThrottledRequestMaxTimes: 10,
    });
    expect(file.size).toBe(21);
    // The first /base/ was throttled and the SDK sent it again.
    expect(proxy.paths.filter((p) => p === 'POST /base/').length).toBeGreaterThanOrEqual(2);
    await proxy.close();
  });
});
