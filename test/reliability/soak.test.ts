/**
 * The soak, only with STOWAGE_RELIABILITY=soak: 10 minutes (STOWAGE_RELIABILITY_SOAK_MINUTES) of
 * mixed load from 16 clients (STOWAGE_RELIABILITY_SOAK_CLIENTS) on one server with its default
 * settings: /base/ uploads of photos of 0.3-12 Mpx, small and odd images and other files, signed
 * REST calls (list, info, store, metadata, delete), CDN renders of varied operations, and webhook
 * deliveries of every upload to a local receiver. The memory of the server's whole process tree
 * (server, launcher helper, tool children) and its open descriptors are read from /proc every 10 s.
 *
 * Asserts: 0 errors (no answer >= 500, no failed request, no other status than the one each
 * call expects), every upload's `file.uploaded` event delivered, the tree's RSS never above
 * 512 MB, and a plateau: growth over the second half of the run (after caches and pools have
 * warmed), the least-squares slope of the samples there times the length of that half, under
 * 16 MB of RSS and 5 descriptors. A leak shows as a steady slope; the noise of a few samples does not.
 */
import crypto from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer, type ProjectKeys, type TestServer } from '../helpers/server.js';
import { restClient, uploadBase, type RestCall } from '../helpers/rest.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { fuzzSamples, type Sample } from './images.js';
import { MODE, envNumber, report } from './mode.js';
import { photoSamples } from './photos.js';
import { Random, seedFromEnv } from './random.js';
import { healthy } from './server-health.js';
import { curveSummary, formatProbe, probe, secondHalfGrowth, type Probe } from './soak-curve.js';

const MINUTES = envNumber('STOWAGE_RELIABILITY_SOAK_MINUTES', 10);
const CLIENTS = envNumber('STOWAGE_RELIABILITY_SOAK_CLIENTS', 16);
const SAMPLE_EVERY_MS = 10_000;
/** smaps (the server's arena and anonymous memory) is walked every this many samples. */
const MAPPINGS_EVERY = 6;
/** Each client rests this long between calls, so the machine's other work still gets a turn. */
const PACE_MS = 20;
const MAX_TREE_RSS_MB = 512;
const MAX_RSS_GROWTH_MB = 16;
const MAX_FD_GROWTH = 5;
const SEED = seedFromEnv();

const servers: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  for (const s of servers.splice(0)) await s.close().catch(() => undefined);
});

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
  it(`${MINUTES} minutes of mixed load from ${CLIENTS} clients: 0 errors, every webhook delivered, memory bounded and flat, no fd growth (seed ${SEED})`, async () => {
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

    const samples: Sample[] = [...(await fuzzSamples()).filter((s) => s.name !== 'strip.png'), ...(await photoSamples(SEED))];
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
      const text = body.toString('utf8', 0, 300);
      // A render past its deadline (20 s) is a correct answer on a machine other work keeps busy:
      // counted apart, not an error.
      if (r.status === 400 && /took longer than/.test(text)) return void (counts['cdn deadline'] = (counts['cdn deadline'] ?? 0) + 1);
      // A crop larger than a small image is the one other 400 a valid chain may get.
      expectStatus('cdn', r.status, ops.startsWith('-/crop/') ? [200, 400] : [200], text);
    };

    const history: Probe[] = [];
    const pid = server.child.pid!;
    const t0 = Date.now();
    const sample = async () => {
      history.push(await probe(pid, Date.now() - t0, `${server.rest}/metrics`, history.length % MAPPINGS_EVERY === 0));
    };
    await sample();
    const sampler = setInterval(() => void sample(), SAMPLE_EVERY_MS);
    const endAt = t0 + MINUTES * 60_000;
    try {
      await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
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
    const seconds = (Date.now() - t0) / 1000;
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
    const rssGrowth = secondHalfGrowth(history, (s) => s.treeRssMb);
    const fdGrowth = secondHalfGrowth(history, (s) => s.fds);
    const peakRss = Math.max(...history.map((s) => s.treeRssMb));
    report('soak', {
      seed: SEED,
      minutes: MINUTES,
      clients: CLIENTS,
      calls: counts,
      perSecond: Object.fromEntries(Object.entries(counts).map(([k, n]) => [k, Math.round((n / seconds) * 10) / 10])),
      errors: errors.length,
      firstErrors: errors.slice(0, 5),
      uploads: uploaded.length,
      webhooksDelivered: uploaded.length - missing.length,
      duplicateDeliveries: receiver.received.length - new Set(receiver.received.map((r) => r.body)).size,
      treeRssMb: curveSummary(history, (s) => s.treeRssMb),
      treePssMb: curveSummary(history, (s) => s.treePssMb),
      serverRssMb: curveSummary(history, (s) => s.serverRssMb),
      fds: curveSummary(history, (s) => s.fds),
      samples: history.map(formatProbe).join(' '),
    });
    expect(errors, 'errors').toEqual([]);
    expect(missing.slice(0, 10), 'uploads whose webhook never came').toEqual([]);
    expect(await healthy(server)).toBe(true);
    expect(peakRss, 'peak RSS (MB) of the process tree').toBeLessThanOrEqual(MAX_TREE_RSS_MB);
    expect(rssGrowth, 'RSS growth (MB) of the process tree over the second half').toBeLessThan(MAX_RSS_GROWTH_MB);
    expect(fdGrowth, 'open fd growth over the second half').toBeLessThan(MAX_FD_GROWTH);
  }, 0);
});
