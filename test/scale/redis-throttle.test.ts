/**
 * With STOWAGE_REDIS_URL the throttling counters live in Redis: they outlive a node (and so are
 * shared by every node of the deployment); without Redis they are per process. An unreachable
 * Redis lets requests through rather than failing them.
 */
import crypto from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

const REDIS_URL = process.env['STOWAGE_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const LIMIT = { STOWAGE_RATE_UPLOAD_PER_SEC: '0.001', STOWAGE_RATE_UPLOAD_BURST: '3' };
const started: TestServer[] = [];

async function start(env: Record<string, string>, from?: TestServer): Promise<TestServer> {
  // useServer() does not fit: nodes restart on the same data dir, with and without Redis.
  const s = await startServer({ env, ...(from ? { dataDir: from.dataDir, ...(from.schema ? { schema: from.schema } : {}), ...(from.bucket ? { bucket: from.bucket } : {}) } : {}) });
  started.push(s);
  return s;
}
afterAll(async () => {
  for (const s of started) await s.stop();
});

/** Status codes of `n` /info/ requests for the project (each one counts against its bucket). */
async function hits(s: TestServer, pub: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await fetch(`${s.upload}/info/?pub_key=${pub}&file_id=${crypto.randomUUID()}`)).status);
  return out;
}

describe('throttling counters', () => {
  it('live in Redis: a restarted node still sees the spent burst', async () => {
    const env = { ...LIMIT, STOWAGE_REDIS_URL: REDIS_URL };
    const a = await start(env);
    const keys = await a.createProject();
    expect(await hits(a, keys.public_key, 4)).toEqual([404, 404, 404, 429]);
    await a.stop();
    const b = await start(env, a);
    expect(await hits(b, keys.public_key, 1)).toEqual([429]);
    const r = await fetch(`${b.upload}/info/?pub_key=${keys.public_key}&file_id=${crypto.randomUUID()}`);
    expect(r.status).toBe(429);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('per client address live in Redis too: random public keys are throttled across a restart', async () => {
    const env = { STOWAGE_RATE_UPLOAD_IP_PER_SEC: '0.001', STOWAGE_RATE_UPLOAD_IP_BURST: '3', STOWAGE_REDIS_URL: REDIS_URL };
    const randomKey = () => crypto.randomBytes(10).toString('hex');
    const a = await start(env);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await fetch(`${a.upload}/info/?pub_key=${randomKey()}&file_id=x`)).status);
    expect(statuses).toEqual([403, 403, 403, 429]);
    await a.stop();
    const b = await start(env, a);
    expect((await fetch(`${b.upload}/info/?pub_key=${randomKey()}&file_id=x`)).status).toBe(429);
  });

  it('are per process without Redis (the control case)', async () => {
    const a = await start(LIMIT);
    const keys = await a.createProject();
    expect(await hits(a, keys.public_key, 4)).toEqual([404, 404, 404, 429]);
    await a.stop();
    const b = await start(LIMIT, a);
    expect(await hits(b, keys.public_key, 1)).toEqual([404]);
  });

  it('let requests through when Redis is unreachable', async () => {
    const a = await start({ ...LIMIT, STOWAGE_REDIS_URL: 'redis://127.0.0.1:1' });
    const keys = await a.createProject();
    expect(await hits(a, keys.public_key, 5)).toEqual([404, 404, 404, 404, 404]);
    expect((await fetch(`${a.upload}/readyz`)).status).toBe(200);
  });
});
