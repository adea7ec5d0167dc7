/**
 * GET /metrics on each surface (Prometheus text format) and X-Request-Id on every response,
 * against a started server: the counts move with real requests.
 */
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
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

describe('/metrics', () => {
  it('counts REST requests by route pattern and status, with latency buckets', async () => {
    const before = value(await scrape(s.rest), 'stowage_http_request_duration_seconds_count{surface="rest",route="/files/",status="200"}');
    for (let i = 0; i < 3; i++) expect((await s.call('GET', '/files/?limit=1')).status).toBe(200);
    expect((await s.call('GET', '/files/', { authorization: null })).status).toBe(401);
    const text = await scrape(s.rest);
    expect(value(text, 'stowage_http_request_duration_seconds_count{surface="rest",route="/files/",status="200"}')).toBe(before + 3);
    expect(value(text, 'stowage_http_request_duration_seconds_count{surface="rest",route="/files/",status="401"}')).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^stowage_http_request_duration_seconds_bucket\{le="0\.005",surface="rest",route="\/files\/",status="200"\} \d+$/m);
    // Node process metrics come along (prefixed), and the job queue's scrape-time gauges.
    expect(text).toMatch(/^stowage_process_resident_memory_bytes \d+/m);
    expect(text).toMatch(/^stowage_job_queue_lag_seconds \d/m);
    expect(value(text, 'stowage_jobs_dead')).toBe(0);
    expect(text).toContain('# HELP stowage_webhook_delivery_failures_total');
  });

  it('counts Upload API bytes and labels the upload route', async () => {
    const before = await scrape(s.upload);
    const bytes = value(before, 'stowage_upload_received_bytes_total');
    await s.uploadFile('blob.bin', Buffer.alloc(200_000, 7));
    const after = await scrape(s.upload);
    expect(value(after, 'stowage_upload_received_bytes_total') - bytes).toBeGreaterThanOrEqual(200_000);
    expect(value(after, 'stowage_http_request_duration_seconds_count{surface="upload",route="/base/",status="200"}')).toBeGreaterThanOrEqual(1);
  });

  it('counts CDN renditions by cache result and URL kind, and 404s', async () => {
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#c33' } }).png().toBuffer();
    const uuid = await s.uploadFile('red.png', png, { type: 'image/png' });
    const before = await scrape(s.cdn);
    const url = `${s.cdn}/${uuid}/-/resize/20x/`;
    for (let i = 0; i < 2; i++) expect((await fetch(url).then(async (r) => [r.status, await r.arrayBuffer()]))[0]).toBe(200);
    expect((await fetch(`${s.cdn}/${uuid}/`)).status).toBe(200);
    expect((await fetch(`${s.cdn}/00000000-0000-4000-8000-000000000000/`)).status).toBe(404);
    const after = await scrape(s.cdn);
    const delta = (series: string) => value(after, series) - value(before, series);
    expect(delta('stowage_cdn_renditions_total{result="miss"}')).toBe(1);
    expect(delta('stowage_cdn_renditions_total{result="hit"}')).toBe(1);
    expect(delta('stowage_http_request_duration_seconds_count{surface="cdn",route="file_operations",status="200"}')).toBe(2);
    expect(delta('stowage_http_request_duration_seconds_count{surface="cdn",route="file",status="200"}')).toBe(1);
    expect(delta('stowage_http_request_duration_seconds_count{surface="cdn",route="file",status="404"}')).toBe(1);
    expect(after).toMatch(/^stowage_cdn_render_queue_waiting 0$/m);
    expect(after).toMatch(/^stowage_cdn_overloaded_total 0$/m);
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
