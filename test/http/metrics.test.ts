/**
 * GET /metrics (Prometheus text format) on the one port a process exposes it, X-Request-Id on every
 * response, and the shipped dashboard and alert rules, against started servers: the counts move
 * with real requests, and every series deploy/ refers to is one a server exports.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, startServer, type TestServer } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';

const s = useServer();

async function scrape(base: string): Promise<string> {
  const res = await fetch(`${base}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
}

/** The value of one series (exact name and labels), or 0 when absent. */
function value(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

/** Every series name a scrape can carry: each family's name and, for histograms, its suffixed series. */
function exportedNames(text: string): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = m as unknown as [string, string, string];
    names.set(name, type);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.set(name + suffix, 'histogram series');
  }
  return names;
}

describe('/metrics', () => {
  it('counts REST requests by route pattern and status, with latency buckets', async () => {
    const before = value(await scrape(s.rest), 'stowage_http_request_duration_seconds_count{surface="rest",route="/files/",status="200"}');
    for (let i = 0; i < 3; i++) expect((await s.call('GET', '/files/?limit=1')).status).toBe(200);
    expect((await s.call('GET', '/files/', { authorization: null })).status).toBe(401);
    const text = await scrape(s.rest);
    expect(value(text, 'stowage_http_request_duration_seconds_count{surface="rest",route="/files/",status="200"}')).toBe(before + 3);
    expect(value(text, 'stowage_http_request_duration_seconds_count{surface="rest",route="/files/",status="401"}')).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^stowage_http_request_duration_seconds_bucket\{le="0\.005",surface="rest",route="\/files\/",status="200"\} \d+$/m);
    // The job queue's and the data dir's scrape-time gauges.
    expect(text).toMatch(/^stowage_job_queue_lag_seconds \d/m);
    expect(value(text, 'stowage_jobs_dead')).toBe(0);
    expect(value(text, 'stowage_data_dir_free_bytes')).toBeGreaterThan(0);
    expect(value(text, 'stowage_data_dir_min_free_bytes')).toBe(1024 ** 3);
    expect(text).toContain('# HELP stowage_webhook_delivery_failures_total');
  });

  it("exports Node's process metrics under their usual names, and names every counter *_total", async () => {
    const text = await scrape(s.rest);
    expect(value(text, 'process_resident_memory_bytes')).toBeGreaterThan(10 * 1024 ** 2);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
    expect(text).not.toMatch(/^stowage_(process|nodejs)_/m);
    const counters = [...exportedNames(text)].filter(([, type]) => type === 'counter').map(([name]) => name);
    expect(counters).toContain('stowage_upload_received_bytes_total');
    expect(counters.filter((name) => !name.endsWith('_total'))).toEqual([]);
  });

  it('answers on the REST port only: the Upload API and the public CDN do not expose it', async () => {
    for (const base of [s.upload, s.cdn]) {
      const res = await fetch(`${base}/metrics`);
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain('# TYPE');
    }
  });

  it('counts Upload API bytes and labels the upload route', async () => {
    const before = await scrape(s.rest);
    const bytes = value(before, 'stowage_upload_received_bytes_total');
    await s.uploadFile('blob.bin', Buffer.alloc(200_000, 7));
    const after = await scrape(s.rest);
    expect(value(after, 'stowage_upload_received_bytes_total') - bytes).toBeGreaterThanOrEqual(200_000);
    expect(value(after, 'stowage_http_request_duration_seconds_count{surface="upload",route="/base/",status="200"}')).toBeGreaterThanOrEqual(1);
  });

  it('counts CDN renditions by cache result and URL kind, and 404s', async () => {
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#c33' } }).png().toBuffer();
    const uuid = await s.uploadFile('red.png', png, { type: 'image/png' });
    const before = await scrape(s.rest);
    const url = `${s.cdn}/${uuid}/-/resize/20x/`;
    for (let i = 0; i < 2; i++) expect((await fetch(url).then(async (r) => [r.status, await r.arrayBuffer()]))[0]).toBe(200);
    expect((await fetch(`${s.cdn}/${uuid}/`)).status).toBe(200);
    expect((await fetch(`${s.cdn}/00000000-0000-4000-8000-000000000000/`)).status).toBe(404);
    const after = await scrape(s.rest);
    const delta = (series: string) => value(after, series) - value(before, series);
    expect(delta('stowage_cdn_renditions_total{result="miss"}')).toBe(1);
    expect(delta('stowage_cdn_renditions_total{result="hit"}')).toBe(1);
    expect(delta('stowage_http_request_duration_seconds_count{surface="cdn",route="file_operations",status="200"}')).toBe(2);
    expect(delta('stowage_http_request_duration_seconds_count{surface="cdn",route="file",status="200"}')).toBe(1);
    expect(delta('stowage_http_request_duration_seconds_count{surface="cdn",route="file",status="404"}')).toBe(1);
    expect(after).toMatch(/^stowage_cdn_render_queue_waiting 0$/m);
    expect(after).toMatch(/^stowage_cdn_overloaded_total 0$/m);
    expect(after).toMatch(/^stowage_cdn_render_timeouts_total 0$/m);
  });

  it('every series the shipped Grafana dashboard and Prometheus alert rules use is one the server exports', async () => {
    const exported = exportedNames(await scrape(s.rest));
    const dashboard = JSON.parse(fs.readFileSync(path.join(ROOT, 'deploy/grafana-dashboard.json'), 'utf8')) as { panels: Array<{ targets?: Array<{ expr: string }> }> };
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
    const rules = fs.readFileSync(path.join(ROOT, 'deploy/prometheus-alerts.yml'), 'utf8');
    exprs.push(...[...rules.matchAll(/^\s+expr: (.+)$/gm)].map((m) => m[1] as string));
    expect(exprs.length).toBeGreaterThan(10);
    const used = new Set(exprs.flatMap((e) => [...e.matchAll(/\b(?:stowage|process|nodejs)_[a-z0-9_]+/g)].map((m) => m[0])));
    expect([...used].filter((name) => !exported.has(name))).toEqual([]);
    for (const alert of ['Stowage5xxRate', 'StowageJobBacklog', 'StowageWebhookFailures', 'StowageDiskLow', 'StowageRenderDeadlines']) {
      expect(rules).toContain(`alert: ${alert}`);
    }
  });
});

describe('/metrics on a port of its own (STOWAGE_METRICS_PORT)', () => {
  // A second server: the port setting and a short render deadline change what the suite's server serves.
  let own: TestServer | undefined;
  afterAll(async () => own?.stop());

  it('serves only there, and counts renders answered at their deadline', async () => {
    own = await startServer({ env: { STOWAGE_METRICS_PORT: '0', STOWAGE_CDN_RENDER_TIMEOUT_MS: '300' } });
    const metricsUrl = /Metrics:\s+(\S+)\n/.exec(own.output())?.[1] ?? '';
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    for (const base of [own.rest, own.upload, own.cdn]) {
      const res = await fetch(`${base}/metrics`);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(await res.text()).not.toContain('# TYPE');
    }
    expect((await fetch(metricsUrl.replace(/metrics$/, 'other'))).status).toBe(404);
    const keys = await own.createProject();
    const noise = await sharp(Buffer.from(Array.from({ length: 400 * 400 * 3 }, (_, i) => (i * 7919) % 251)), { raw: { width: 400, height: 400, channels: 3 } }).jpeg().toBuffer();
    const form = new FormData();
    form.set('UPLOADCARE_PUB_KEY', keys.public_key);
    form.set('file', new Blob([noise], { type: 'image/jpeg' }), 'n.jpg');
    const uuid = ((await (await fetch(`${own.upload}/base/`, { method: 'POST', body: form })).json()) as { file: string }).file;
    // A 64 Mpx intermediate blurred: far past a 300 ms deadline.
    const slow = await fetch(`${own.cdn}/${uuid}/-/resize/8000x8000/-/blur/200/-/resize/100x/`);
    expect(slow.status).toBe(400);
    const text = await (await fetch(metricsUrl)).text();
    expect(value(text, 'stowage_cdn_render_timeouts_total')).toBe(1);
    expect(value(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });
});

describe('X-Request-Id', () => {
  it('echoes a sane id the client sent and makes one otherwise, on every surface', async () => {
    for (const base of [s.rest, s.upload, s.cdn]) {
      const given = await fetch(`${base}/healthz-not-here/`, { headers: { 'x-request-id': 'trace-42.abc' } });
      expect(given.headers.get('x-request-id')).toBe('trace-42.abc');
      const a = (await fetch(`${base}/nothing/`, { headers: { 'x-request-id': 'has spaces <and> marks' } })).headers.get('x-request-id');
      const b = (await fetch(`${base}/nothing/`)).headers.get('x-request-id');
      expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
      expect(b).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
      expect(a).not.toBe(b);
    }
  });
});
