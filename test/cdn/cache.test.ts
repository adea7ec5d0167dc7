/**
 * Speed and safety of processed delivery over HTTP: result cache (memory and disk, survives a
 * restart, bounded with eviction), single-flight for identical concurrent requests, and the
 * bounded work queue answering 503 + Retry-After under overload.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import sharp from 'sharp';
import { startServer, type TestServer, usingS3 } from '../helpers/server.js';
import { get, put } from './helpers.js';

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});
async function start(env: Record<string, string> = {}, reuse?: TestServer): Promise<TestServer> {
  const s = await startServer({ env, ...(reuse && { dataDir: reuse.dataDir, schema: reuse.schema }) });
  servers.push(s);
  return s;
}

async function noise(w: number, h: number): Promise<Buffer> {
  return sharp({ create: { width: w, height: h, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 60 } } }).jpeg().toBuffer();
}

function cacheBytes(dataDir: string): number {
  const dir = join(dataDir, 'cache');
  let total = 0;
  for (const sub of readdirSync(dir)) {
    if (!/^[0-9a-f]{2}$/.test(sub)) continue;
    for (const f of readdirSync(join(dir, sub))) total += statSync(join(dir, sub, f)).size;
  }
  return total;
}

describe('result cache', () => {
  test('second response is identical and served from cache, also after a restart (disk)', async () => {
    const s = await start();
    const keys = await s.createProject();
    const id = await put(s, keys, 'n.jpg', await noise(400, 300));
    const path = `/${id}/-/resize/123x/-/format/webp/`;
    const first = await get(s, path);
    const second = await get(s, path);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect([first.headers.get('x-stowage-cache'), second.headers.get('x-stowage-cache')]).toEqual(['miss', 'hit']);
    expect(second.body.equals(first.body)).toBe(true);
    expect(second.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(cacheBytes(s.dataDir)).toBeGreaterThan(first.body.length);
    await s.stop();
    const again = await start({}, s);
    const third = await get(again, path);
    expect(third.headers.get('x-stowage-cache')).toBe('hit');
    expect(third.body.equals(first.body)).toBe(true);
    // A different plan or negotiated format is a different entry.
    expect((await get(again, `/${id}/-/resize/124x/-/format/webp/`)).headers.get('x-stowage-cache')).toBe('miss');
  });

  test('the disk cache stays under its bound and evicts the least recently used', async () => {
    const s = await start({ STOWAGE_CDN_CACHE_MAX_BYTES: '60000', STOWAGE_CDN_MEMORY_CACHE_BYTES: '0' });
    const keys = await s.createProject();
    const id = await put(s, keys, 'n.jpg', await noise(400, 300));
    const sizes: number[] = [];
    for (let w = 100; w < 112; w++) {
      const r = await get(s, `/${id}/-/resize/${w}x/-/quality/best/`);
      expect(r.headers.get('x-stowage-cache')).toBe('miss');
      sizes.push(r.body.length);
    }
    expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThan(60000);
    expect(cacheBytes(s.dataDir)).toBeLessThanOrEqual(60000);
    expect((await get(s, `/${id}/-/resize/111x/-/quality/best/`)).headers.get('x-stowage-cache')).toBe('hit');
    // Evicted here; with object storage (STOWAGE_TEST_S3) the bucket's shared tier still has it.
    expect((await get(s, `/${id}/-/resize/100x/-/quality/best/`)).headers.get('x-stowage-cache')).toBe(usingS3() ? 'remote' : 'miss');
  });
});

describe('single-flight', () => {
  test('N identical concurrent uncached requests are processed once', async () => {
    const s = await start();
    const keys = await s.createProject();
    const id = await put(s, keys, 'n.jpg', await noise(1600, 1200));
    const path = `/${id}/-/blur/40/-/resize/777x/-/quality/best/`;
    const all = await Promise.all(Array.from({ length: 8 }, () => get(s, path)));
    expect(all.map((r) => r.status)).toEqual(Array(8).fill(200));
    const states = all.map((r) => r.headers.get('x-stowage-cache'));
    expect(states.filter((x) => x === 'miss')).toHaveLength(1);
    expect(states.every((x) => x === 'miss' || x === 'shared' || x === 'hit')).toBe(true);
    for (const r of all) expect(r.body.equals(all[0]!.body)).toBe(true);
  });
});

describe('overload', () => {
  test('beyond the queue bound: 503 with Retry-After, and the server stays healthy', async () => {
    const s = await start({ STOWAGE_CDN_PROCESS_CONCURRENCY: '1', STOWAGE_CDN_PROCESS_QUEUE: '1' });
    const keys = await s.createProject();
    const id = await put(s, keys, 'n.jpg', await noise(1600, 1200));
    const all = await Promise.all(Array.from({ length: 16 }, (_, i) => get(s, `/${id}/-/blur/60/-/resize/${900 + i}x/-/quality/best/`)));
    const busy = all.filter((r) => r.status === 503);
    const ok = all.filter((r) => r.status === 200);
    expect(busy.length).toBeGreaterThan(0);
    expect(ok.length).toBeGreaterThan(0);
    expect(busy.length + ok.length).toBe(16);
    for (const r of busy) {
      expect(r.headers.get('retry-after')).toBe('1');
      expect(r.headers.get('cache-control')).toBe('no-store');
      expect(r.text).toContain('busy');
    }
    const after = await get(s, `/${id}/-/resize/50x/`);
    expect(after.status).toBe(200);
    expect((await sharp(after.body).metadata()).width).toBe(50);
    expect((await get(s, `/${id}/`)).status).toBe(200);
  });

  test('a render answered at its deadline keeps its slot until its work has stopped', async () => {
    // One slot, no waiting room: a second render while the first still runs is a 503.
    const s = await start({ STOWAGE_CDN_PROCESS_CONCURRENCY: '1', STOWAGE_CDN_PROCESS_QUEUE: '0', STOWAGE_CDN_RENDER_TIMEOUT_MS: '300' });
    const keys = await s.createProject();
    const id = await put(s, keys, 'n.jpg', await noise(400, 400));
    // A 64 Mpx intermediate: libvips works on it until its own timeout (whole seconds, so >= 1 s),
    // well past the 300 ms answer. The slot used to be freed at the answer, so renders past their
    // deadline piled up beyond the bound (memory grew with every slow URL).
    const slow = await get(s, `/${id}/-/resize/8000x8000/-/blur/200/-/resize/100x/`);
    expect(slow.status, slow.text).toBe(400);
    expect(slow.text).toContain('longer than');
    const next = await get(s, `/${id}/-/resize/60x/`);
    expect(next.status, 'the abandoned render still holds the only slot').toBe(503);
    // And the slot comes back once that work has ended.
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await get(s, `/${id}/-/resize/${61 + i}x/`)).status;
    }
    expect(status).toBe(200);
  });
});
