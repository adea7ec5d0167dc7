/**
 * Hostile-file catalogue: each file is uploaded and rendered through the CDN. Every
 * answer is below 500 and comes within a bounded time, no render stalls the event loop for more
 * than 50 ms, the server's memory stays bounded, nothing is fetched from a URL inside an SVG, and
 * processed SVG output carries no script.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type ProjectKeys, type TestServer } from '../helpers/server.js';
import { uploadBase } from '../helpers/rest.js';
import { headerBombs, hostileSvgs, realBombs, rleFiles, type HostileFile } from './hostile-files.js';
import { MODE, SOAK_ONLY, pendingGate, report } from './mode.js';
import { STALL_THRESHOLD_MS, confirmStall, startProbe, stallsDuring, type Probe } from './probe.js';
import { healthy, rssMb, rssSampler } from './server-health.js';

/**
 * Cases whose fix is not on main yet (skipped; STOWAGE_RELIABILITY_UNGATE=all runs them): none now.
 * The stall:<file> cases (the RLE TGA/PCX decoders, now in worker threads, and the 6 MB
 * many-elements.svg, now sanitised in the decoder pool) were un-gated after a run on a quiet
 * machine measured no stall for any of them (docs/reliability.md); the earlier confirmations were
 * at a load average of 25-43, where the probe cannot tell a stall from contention.
 * A file whose stall is pending is only uploaded and delivered raw in the bounded run.
 */
const PENDING = new Set<string>();
const pending = pendingGate(PENDING);

/** No render may take longer than this (a render has a deadline, a decoder a time limit). */
const RENDER_DEADLINE_MS = 30_000;
/** Peak RSS of the server over the whole catalogue. */
const RSS_LIMIT_MB = 1536;
const RASTER_RENDERS = ['', '-/json/', '-/preview/', '-/resize/100x/-/format/webp/', '-/crop/50x50/center/'];
const SVG_RENDERS = ['', '-/json/', '-/preview/', '-/resize/50x/', '-/rasterize/-/format/png/', '-/rasterize/-/resize/3000x/-/format/png/'];
const SANITIZER_CASES = new Set(['xhtml-script.svg', 'svg-prefix-script.svg', 'smil-href.svg']);
const SLOW_SVGS = new Set(['many-elements.svg', 'filter-bomb.svg']);

/** The renders a file gets in this run (see the PENDING notes). */
function rendersOf(file: HostileFile): string[] {
  if (file.type === 'image/svg+xml') {
    return SLOW_SVGS.has(file.name) && pending('svg-render-deadline') ? SVG_RENDERS.filter((r) => !r.includes('rasterize')) : SVG_RENDERS;
  }
  if (pending(`stall:${file.name}`) && MODE === 'bounded') return [''];
  return RASTER_RENDERS;
}

let server: TestServer;
let keys: ProjectKeys;
let probe: Probe;
let controlUuid: string;
let listener: http.Server;
let listenerUrl: string;
const fetchedByServer: string[] = [];
let sampler: ReturnType<typeof rssSampler>;
let baselineRssMb = 0;
const figures: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  if (SOAK_ONLY) return;
  // A listener an SVG points at: any request reaching it means the renderer fetched a reference.
  listener = http.createServer((req, res) => {
    fetchedByServer.push(req.url ?? '');
    res.end('<svg xmlns="http://www.w3.org/2000/svg"/>');
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  listenerUrl = `http://127.0.0.1:${(listener.address() as { port: number }).port}`;
  server = await startServer({ env: { STOWAGE_RATE_UPLOAD_PER_SEC: '0', STOWAGE_LOG_LEVEL: 'error', STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8' } });
  keys = await server.createProject();
  controlUuid = (await uploadBase(server.upload, keys.public_key, [{ name: 'control.txt', data: 'control' }], { UPLOADCARE_STORE: '1' })).json.file as string;
  probe = startProbe(server.rest);
  baselineRssMb = rssMb(server.child.pid!);
  sampler = rssSampler(server.child.pid!);
}, 120_000);

afterAll(async () => {
  await probe?.stop();
  await server?.stop();
  await new Promise<void>((resolve) => (listener ? listener.close(() => resolve()) : resolve()));
});

interface Rendered {
  path: string;
  status: number;
  ms: number;
  gapMs: number;
  contentType: string;
  body: Buffer;
}

async function render(path: string): Promise<Rendered> {
  await new Promise((r) => setTimeout(r, 20));
  const startMs = Date.now();
  let status = 0;
  let contentType = '';
  let body = Buffer.alloc(0);
  try {
    const r = await fetch(server.cdn + path, { signal: AbortSignal.timeout(RENDER_DEADLINE_MS) });
    status = r.status;
    contentType = r.headers.get('content-type') ?? '';
    body = Buffer.from(await r.arrayBuffer());
  } catch {
    status = -1; // no answer within the deadline
  }
  const endMs = Date.now();
  await new Promise((r) => setTimeout(r, 30));
  const gapMs = Math.max(0, ...stallsDuring((await probe.snapshot()).stalls, startMs, endMs).map((s) => s.latencyMs));
  return { path, status, ms: endMs - startMs, gapMs, contentType, body };
}

/** Confirms a suspected stall against a control (the raw delivery of a tiny file). */
async function confirmedStall(uuid: string, first: Rendered): Promise<number> {
  if (first.gapMs <= STALL_THRESHOLD_MS) return 0;
  // Fresh sizes each round, so no cache answers and the file is decoded again.
  return confirmStall(
    probe,
    (round) => fetch(`${server.cdn}/${uuid}/-/preview/${91 + round}x${91 + round}/`, { signal: AbortSignal.timeout(RENDER_DEADLINE_MS) }).then((r) => r.arrayBuffer()).catch(() => undefined),
    () => fetch(`${server.cdn}/${controlUuid}/`).then((r) => r.arrayBuffer()),
  );
}

async function runCatalogueFile(file: HostileFile): Promise<void> {
  const t0 = Date.now();
  const up = await uploadBase(server.upload, keys.public_key, [{ name: file.name, data: file.data, type: file.type }], { UPLOADCARE_STORE: '1' });
  expect(up.status, `upload: ${up.text}`).toBeLessThan(500);
  const uploadMs = Date.now() - t0;
  if (up.status !== 200) {
    figures.push({ file: file.name, upload: up.status, uploadMs });
    return;
  }
  const uuid = up.json.file as string;
  const isSvg = file.type === 'image/svg+xml';
  const results: Rendered[] = [];
  for (const ops of rendersOf(file)) results.push(await render(`/${uuid}/${ops}`));
  const worst = results.reduce((a, b) => (b.gapMs > a.gapMs ? b : a));
  const stallMs = pending(`stall:${file.name}`) && MODE === 'bounded' ? 0 : await confirmedStall(uuid, worst);
  figures.push({ file: file.name, bytes: file.data.length, upload: up.status, uploadMs, renders: results.map((r) => `${r.status} ${r.ms}ms gap ${r.gapMs}`), stallMs });
  for (const r of results) {
    expect(r.status, `${r.path}: answered`).toBeGreaterThan(0);
    expect(r.status, `${r.path}: ${r.body.toString('utf8', 0, 200)}`).toBeLessThan(500);
    expect(r.ms, `${r.path}: bounded time`).toBeLessThan(RENDER_DEADLINE_MS);
  }
  if (!pending(`stall:${file.name}`)) expect(stallMs, `${file.name}: event-loop stall (ms)`).toBe(0);
  if (isSvg && !(SANITIZER_CASES.has(file.name) && pending('svg-sanitizer-namespaces'))) {
    for (const r of results.filter((x) => x.path !== `/${uuid}/` && x.contentType.includes('svg'))) {
      const text = r.body.toString('utf8');
      for (const bad of [/<(\w+:)?script/i, /javascript:/i, /\son\w+\s*=/i, /foreignObject/i, /file:\/\//i, new RegExp(listenerUrl.replace(/[.:/]/g, '\\$&'))]) {
        expect(text, `${file.name} ${r.path}`).not.toMatch(bad);
      }
    }
  }
  expect(await healthy(server), 'server alive').toBe(true);
}

describe.skipIf(SOAK_ONLY)('hostile-file catalogue', async () => {
  // Built before the tests are declared, so each file is its own test.
  const catalogue: HostileFile[] = SOAK_ONLY
    ? []
    : [...(await realBombs(8600)), ...(await headerBombs(100_000, 100_000)), ...(await headerBombs(16_000, 16_000)), ...rleFiles(), ...hostileSvgs('http://127.0.0.1:9')];

  for (const file of catalogue) {
    it(`${file.name}: ${file.attack}`, async () => {
      // SVGs point at the live listener (its port is known only now).
      const live = file.type === 'image/svg+xml' ? { ...file, data: Buffer.from(file.data.toString('utf8').replaceAll('http://127.0.0.1:9', listenerUrl)) } : file;
      await runCatalogueFile(live);
    }, 240_000);
  }

  it('nothing was fetched from inside an SVG, memory stayed bounded, the server is alive', async () => {
    const peak = sampler.stop();
    report('hostile-files', { baselineRssMb, peakRssMb: peak, fetchedByServer, files: figures });
    expect(fetchedByServer).toEqual([]);
    expect(peak, 'peak RSS (MB)').toBeLessThan(RSS_LIMIT_MB);
    expect(await healthy(server)).toBe(true);
  });
});
