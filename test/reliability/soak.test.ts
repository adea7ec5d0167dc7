/**
 * The soak, only with STOWAGE_RELIABILITY=soak: 30 minutes (STOWAGE_RELIABILITY_SOAK_MINUTES)
 * of mixed load on one server: /base/ uploads of images and other files, signed REST calls
 * (list, info, store, metadata, delete), CDN renders of varied operations, and webhook
 * deliveries of every upload to a local receiver. The server's RSS and open file descriptors are
 * sampled every 10 s.
 *
 * Asserts: 0 errors (no answer >= 500, no failed request, no other status than the one each
 * call expects), every upload's `file.uploaded` event delivered, and no growth. Growth is
 * judged on the second half of the run, after caches and pools have warmed: the least-squares
 * slope of the samples there, times the length of that half, must stay under 64 MB of RSS and
 * under 5 descriptors. A leak shows as a steady slope; the noise of a few samples does not.
 */
import crypto from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer, type ProjectKeys, type TestServer } from '../helpers/server.js';
import { restClient, uploadBase, type RestCall } from '../helpers/rest.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { fuzzSamples, type Sample } from './images.js';
import { MODE, envNumber, report } from './mode.js';
import { Random, seedFromEnv } from './random.js';
import { healthy, openFds, rssMb } from './server-health.js';

const MINUTES = envNumber('STOWAGE_RELIABILITY_SOAK_MINUTES', 30);
const SAMPLE_EVERY_MS = 10_000;
const WORKERS = 4;
/** Each worker rests this long between calls: a steady load that leaves the shared machine usable. */
const PACE_MS = 40;
const MAX_RSS_GROWTH_MB = 64;
const MAX_FD_GROWTH = 5;
const SEED = seedFromEnv();

const servers: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  for (const s of servers.splice(0)) await s.close().catch(() => undefined);
});

interface Probe {
  tMs: number;
  rssMb: number;
  fds: number;
  /** V8's used heap and memory outside it held by JS objects (Buffers), from /metrics: tells a JS leak from native growth. */
  heapMb?: number;
  externalMb?: number;
}

/** One gauge of the server's own /metrics, in MB (undefined when absent). */
function gaugeMb(text: string, name: string): number | undefined {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'm').exec(text);
  return m ? Math.round(Number(m[1]) / 1048576) : undefined;
}

/** Slope (per ms) of the least-squares line through (t, y). */
function slope(points: Array<{ t: number; y: number }>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mt = points.reduce((s, p) => s + p.t, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.t - mt) * (p.y - my);
    den += (p.t - mt) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** Growth over the second half of the run, from the fitted slope there. */
function secondHalfGrowth(samples: Probe[], pick: (s: Probe) => number): number {
  const half = samples.slice(Math.floor(samples.length / 2));
  if (half.length < 2) return 0;
  const span = half[half.length - 1]!.tMs - half[0]!.tMs;
  return slope(half.map((s) => ({ t: s.tMs, y: pick(s) }))) * span;
}

const CDN_OPS = [
  '-/resize/{w}x/',
  '-/scale_crop/{w}x{h}/center/',
  '-/preview/{w}x{h}/-/format/webp/',
  '-/crop/{w}x{h}/10,10/-/format/png/',
  '-/resize/{w}x{h}/-/quality/smart/-/format/jpeg/',
  '-/blur/10/-/resize/{w}x/',
  '-/grayscale/-/preview/{w}x{h}/',
  '-/json/',
];

describe.skipIf(MODE !== 'soak')('soak', () => {
  it(`${MINUTES} minutes of mixed load: 0 errors, every webhook delivered, no RSS or fd growth (seed ${SEED})`, async () => {
    const receiver: Receiver = await startReceiver();
    servers.push(receiver);
    const server: TestServer = await startServer({
      env: {
        STOWAGE_RATE_UPLOAD_PER_SEC: '0',
        STOWAGE_RATE_UPLOAD_IP_PER_SEC: '0',
        STOWAGE_RATE_REST_PER_SEC: '0',
        STOWAGE_LOG_LEVEL: 'error',
        STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8',
      },
    });
    servers.push({ close: () => server.stop() });
    const keys: ProjectKeys = await server.createProject();
    const call: RestCall = restClient(server.rest, keys);
    const hook = await call('POST', '/webhooks/', { body: new URLSearchParams({ target_url: receiver.url, event: 'file.uploaded' }).toString(), contentType: 'application/x-www-form-urlencoded' });
    expect(hook.status, hook.text).toBe(201);

    const samples: Sample[] = (await fuzzSamples()).filter((s) => s.name !== 'strip.png');
    const images: string[] = [];
    const uploaded: string[] = [];
    const removed = new Set<string>();
    const counts: Record<string, number> = {};
    const errors: string[] = [];
    const rnd = new Random(SEED);
    const fail = (what: string) => {
      if (errors.length < 50) errors.push(what);
      else errors.length++;
    };
    const expectStatus = (what: string, status: number, ok: number[], text: string) => {
      counts[what] = (counts[what] ?? 0) + 1;
      if (!ok.includes(status)) fail(`${what}: ${status} ${text.slice(0, 200)}`);
    };

    const upload = async () => {
      const image = rnd.chance(0.5);
      const s = image ? rnd.pick(samples) : { name: 'blob.bin', type: 'application/octet-stream', data: crypto.randomBytes(rnd.int(1, 200_000)) };
      const r = await uploadBase(server.upload, keys.public_key, [{ name: s.name, data: s.data, type: s.type }], { UPLOADCARE_STORE: rnd.pick(['0', '1']) });
      expectStatus('upload', r.status, [200], r.text);
      if (r.status !== 200) return;
      const uuid = r.json.file as string;
      uploaded.push(uuid);
      if (image && s.type.startsWith('image/')) images.push(uuid);
    };
    const live = () => uploaded.filter((u) => !removed.has(u));
    const rest = async () => {
      const pool = live();
      const uuid = pool.length ? rnd.pick(pool) : null;
      const op = uuid ? rnd.int(0, 4) : 0;
      if (op === 0) {
        const r = await call('GET', `/files/?limit=${rnd.int(1, 50)}&ordering=-datetime_uploaded`);
        expectStatus('rest list', r.status, [200], r.text);
      } else if (op === 1) {
        const r = await call('GET', `/files/${uuid}/`);
        expectStatus('rest info', r.status, [200], r.text);
      } else if (op === 2) {
        const r = await call('PUT', `/files/${uuid}/storage/`);
        expectStatus('rest store', r.status, [200], r.text);
      } else if (op === 3) {
        const r = await call('PUT', `/files/${uuid}/metadata/k${rnd.int(0, 5)}/`, { body: JSON.stringify(`v${rnd.int(0, 1e6)}`) });
        expectStatus('rest metadata', r.status, [200, 201], r.text);
      } else if (!images.includes(uuid!) && pool.length > 20) {
        // Images stay for the CDN; other files may go.
        removed.add(uuid!);
        const r = await call('DELETE', `/files/${uuid}/storage/`);
        expectStatus('rest delete', r.status, [200], r.text);
      }
    };
    const cdn = async () => {
      const pool = images.filter((u) => !removed.has(u));
      if (pool.length === 0) return upload();
      const ops = rnd
        .pick(CDN_OPS)
        .replace('{w}', String(rnd.int(8, 64) * 10))
        .replace('{h}', String(rnd.int(8, 64) * 10));
      const r = await fetch(`${server.cdn}/${rnd.pick(pool)}/${ops}`);
      const body = Buffer.from(await r.arrayBuffer());
      // A crop larger than a small image is the one 400 a valid chain may get.
      expectStatus('cdn', r.status, ops.startsWith('-/crop/') ? [200, 400] : [200], body.toString('utf8', 0, 200));
    };

    const history: Probe[] = [];
    const pid = server.child.pid!;
    const t0 = Date.now();
    const sample = async () => {
      const probe: Probe = { tMs: Date.now() - t0, rssMb: rssMb(pid), fds: openFds(pid) };
      history.push(probe);
      const text = await fetch(`${server.rest}/metrics`).then((r) => r.text()).catch(() => '');
      probe.heapMb = gaugeMb(text, 'nodejs_heap_size_used_bytes');
      probe.externalMb = gaugeMb(text, 'nodejs_external_memory_bytes');
    };
    await sample();
    const sampler = setInterval(() => void sample(), SAMPLE_EVERY_MS);
    const endAt = t0 + MINUTES * 60_000;
    try {
      await Promise.all(
        Array.from({ length: WORKERS }, async () => {
          while (Date.now() < endAt) {
            const pickAction = rnd.next();
            try {
              if (pickAction < 0.3) await upload();
              else if (pickAction < 0.6) await rest();
              else await cdn();
            } catch (err) {
              fail(`request failed: ${String(err)}`);
            }
            await new Promise((r) => setTimeout(r, PACE_MS));
          }
        }),
      );
    } finally {
      clearInterval(sampler);
    }
    await sample();

    // Every acknowledged upload's event reaches the receiver (at least once).
    const delivered = () => new Set(receiver.received.filter((r) => r.json?.hook?.event === 'file.uploaded').map((r) => r.json.data.uuid as string));
    const deadline = Date.now() + 120_000;
    let missing: string[] = uploaded;
    while (Date.now() < deadline) {
      const got = delivered();
      missing = uploaded.filter((u) => !got.has(u));
      if (missing.length === 0) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const rssGrowth = secondHalfGrowth(history, (s) => s.rssMb);
    const fdGrowth = secondHalfGrowth(history, (s) => s.fds);
    report('soak', {
      seed: SEED,
      minutes: MINUTES,
      calls: counts,
      errors: errors.length,
      firstErrors: errors.slice(0, 5),
      uploads: uploaded.length,
      webhooksDelivered: uploaded.length - missing.length,
      duplicateDeliveries: receiver.received.length - new Set(receiver.received.map((r) => r.body)).size,
      rssMb: { first: history[0]!.rssMb, last: history[history.length - 1]!.rssMb, peak: Math.max(...history.map((s) => s.rssMb)), secondHalfGrowth: Math.round(rssGrowth) },
      fds: { first: history[0]!.fds, last: history[history.length - 1]!.fds, peak: Math.max(...history.map((s) => s.fds)), secondHalfGrowth: Math.round(fdGrowth * 10) / 10 },
      samples: history.map((s) => `${Math.round(s.tMs / 1000)}s:${s.rssMb}MB/${s.fds}/h${s.heapMb ?? '?'}/x${s.externalMb ?? '?'}`).join(' '),
    });
    expect(errors, 'errors').toEqual([]);
    expect(missing.slice(0, 10), 'uploads whose webhook never came').toEqual([]);
    expect(await healthy(server)).toBe(true);
    expect(rssGrowth, 'RSS growth (MB) over the second half').toBeLessThan(MAX_RSS_GROWTH_MB);
    expect(fdGrowth, 'open fd growth over the second half').toBeLessThan(MAX_FD_GROWTH);
  }, 0);
});
