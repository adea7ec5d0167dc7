/**
 * The official upload widget (@uploadcare/file-uploader) in a real browser (Debian's chromium,
 * driven by playwright-core) against a started Stowage, with only its base URLs changed: direct
 * upload, multipart upload, and an image whose thumbnail the widget takes from the CDN. The page
 * is served from another origin, so every call is a real cross-origin request with its preflight.
 * `.ci/run` installs chromium; without it this suite is skipped.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, testS3 } from '../helpers/server.js';
import { useServer, type ServedSuite } from '../helpers/use-server.js';

const CHROMIUM = '/usr/bin/chromium';
const WIDGET = path.join(ROOT, 'node_modules', '@uploadcare', 'file-uploader', 'web');
const MIB = 1024 * 1024;

/** The page: widget config from the query string; upload outcomes collected in window.outcomes. */
const PAGE = `<!doctype html>
<html><head>
<link rel="stylesheet" href="/uc/uc-file-uploader-minimal.min.css">
<script src="/uc/file-uploader.iife.min.js"></script>
</head><body>
<uc-config id="cfg" ctx-name="up"></uc-config>
<uc-file-uploader-minimal ctx-name="up"></uc-file-uploader-minimal>
<uc-upload-ctx-provider id="ctx" ctx-name="up"></uc-upload-ctx-provider>
<script>
  const q = new URLSearchParams(location.search);
  const cfg = document.getElementById('cfg');
  cfg.pubkey = q.get('pub');
  cfg.baseUrl = q.get('upload');
  cfg.cdnCname = q.get('cdn');
  cfg.multipartMinFileSize = ${10 * MIB};
  window.outcomes = [];
  UC.defineComponents(UC);
  const ctx = document.getElementById('ctx');
  ctx.addEventListener('file-upload-success', (e) => window.outcomes.push({ ok: true, uuid: e.detail.uuid, info: e.detail.fileInfo }));
  ctx.addEventListener('file-upload-failed', (e) => window.outcomes.push({ ok: false, errors: (e.detail.errors || []).map((x) => String(x.message)) }));
</script>
</body></html>`;

/** Bytes the page and the test both derive from a length, so the test can compare without transferring them. */
function patterned(length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i++) out[i] = (i * 31 + (i >> 11)) & 0xff;
  return out;
}

interface Outcome { ok: boolean; uuid?: string; info?: { size: number; isImage: boolean; mimeType: string }; errors?: string[] }

let pageServer: http.Server;
let pageBase: string;
let browser: Browser;

function servePage(): Promise<http.Server> {
  const srv = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://page');
    if (url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return void res.end(PAGE);
    }
    const name = url.pathname.startsWith('/uc/') ? path.basename(url.pathname) : '';
    const file = path.join(WIDGET, name);
    if (!name || !fs.existsSync(file)) {
      res.writeHead(404);
      return void res.end();
    }
    res.writeHead(200, { 'content-type': name.endsWith('.js') ? 'text/javascript' : 'text/css' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve(srv)));
}

/** Opens the page and records every response from Stowage (method, status, URL). */
async function openWidget(srv: ServedSuite): Promise<{ page: Page; seen: string[] }> {
  const page = await browser.newPage();
  // The widget reports telemetry to the hosted service; nothing outside this machine is reachable.
  await page.route((url) => !url.hostname.startsWith('127.0.0.1'), (route) => route.abort());
  // Every response but the page's own: Stowage's, and the bucket's when parts go straight to S3.
  const seen: string[] = [];
  page.on('response', (r) => {
    if (!r.url().startsWith(pageBase)) seen.push(`${r.request().method()} ${r.status()} ${r.url()}`);
  });
  const q = new URLSearchParams({ pub: srv.keys.public_key, upload: srv.upload, cdn: srv.cdn });
  await page.goto(`${pageBase}/?${q}`);
  await page.waitForFunction(() => typeof (document.getElementById('ctx') as unknown as { getAPI?: unknown }).getAPI === 'function');
  return { page, seen };
}

/** Adds one file through the widget's JS API, uploads it and waits for the outcome. */
async function uploadThroughWidget(page: Page, file: { kind: 'bytes'; length: number } | { kind: 'png' }): Promise<Outcome> {
  await page.evaluate(async (f) => {
    const api = (document.getElementById('ctx') as unknown as { getAPI(): { addFileFromObject(file: File): void; uploadAll(): void } }).getAPI();
    if (f.kind === 'png') {
      const canvas = new OffscreenCanvas(320, 200);
      const g = canvas.getContext('2d')!;
      g.fillStyle = '#3a7bd5';
      g.fillRect(0, 0, 320, 200);
      api.addFileFromObject(new File([await canvas.convertToBlob({ type: 'image/png' })], 'pic.png', { type: 'image/png' }));
    } else {
      const bytes = new Uint8Array(f.length);
      for (let i = 0; i < f.length; i++) bytes[i] = (i * 31 + (i >> 11)) & 0xff;
      api.addFileFromObject(new File([bytes], 'data.bin', { type: 'application/octet-stream' }));
    }
    api.uploadAll();
  }, file);
  await page.waitForFunction(() => (window as unknown as { outcomes: unknown[] }).outcomes.length > 0, null, { timeout: 60_000 });
  return (await page.evaluate(() => (window as unknown as { outcomes: Outcome[] }).outcomes[0]))!;
}

/** With object storage the browser PUTs parts to the bucket: the CORS rule docs/scale-out.md asks operators for. */
async function allowBrowserParts(bucket: string, origin: string): Promise<void> {
  const { PutBucketCorsCommand } = await import('@aws-sdk/client-s3');
  const s3 = await testS3();
  await s3.client.send(new PutBucketCorsCommand({
    Bucket: bucket,
    CORSConfiguration: { CORSRules: [{ AllowedOrigins: [origin], AllowedMethods: ['PUT'], AllowedHeaders: ['*'], ExposeHeaders: ['ETag'] }] },
  }));
}

const md5 = (b: Buffer) => crypto.createHash('md5').update(b).digest('hex');

describe.skipIf(!fs.existsSync(CHROMIUM))('upload widget (@uploadcare/file-uploader) in chromium', () => {
  const srv = useServer();
  beforeAll(async () => {
    pageServer = await servePage();
    pageBase = `http://127.0.0.1:${(pageServer.address() as { port: number }).port}`;
    if (srv.server.bucket) await allowBrowserParts(srv.server.bucket, pageBase);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    pageServer?.close();
  });

  it('uploads a small file directly (/base/), and the CDN serves its bytes', async () => {
    const { page, seen } = await openWidget(srv);
    const outcome = await uploadThroughWidget(page, { kind: 'bytes', length: 20_000 });
    expect(outcome, JSON.stringify(outcome.errors)).toMatchObject({ ok: true, info: { size: 20_000, isImage: false } });
    expect(seen.some((s) => /^POST 200 .*\/base\//.test(s)), seen.join('\n')).toBe(true);
    const body = Buffer.from(await (await fetch(`${srv.cdn}/${outcome.uuid}/`)).arrayBuffer());
    expect(md5(body)).toBe(md5(patterned(20_000)));
    await page.close();
  });

  it('uploads a 12 MB file in parts (/multipart/), byte for byte', async () => {
    const { page, seen } = await openWidget(srv);
    const length = 12 * 1000 * 1000;
    const outcome = await uploadThroughWidget(page, { kind: 'bytes', length });
    expect(outcome, JSON.stringify(outcome.errors)).toMatchObject({ ok: true, info: { size: length } });
    // Parts go to Stowage (/multipart/upload/…) or, with object storage, straight to the bucket.
    expect(seen.filter((s) => /^PUT 200 /.test(s)).length, seen.join('\n')).toBeGreaterThanOrEqual(2);
    expect(seen.some((s) => /^POST 200 .*\/multipart\/complete\//.test(s))).toBe(true);
    const body = Buffer.from(await (await fetch(`${srv.cdn}/${outcome.uuid}/`)).arrayBuffer());
    expect(md5(body)).toBe(md5(patterned(length)));
    await page.close();
  }, 120_000);

  it('uploads an image and shows the thumbnail it asks the CDN for', async () => {
    const { page, seen } = await openWidget(srv);
    const outcome = await uploadThroughWidget(page, { kind: 'png' });
    expect(outcome, JSON.stringify(outcome.errors)).toMatchObject({ ok: true, info: { isImage: true, mimeType: 'image/png' } });
    // The widget's thumbnail: a CDN URL with operations (e.g. -/scale_crop/76x76/center/), drawn in the page.
    await page.waitForFunction(
      (uuid) => [...document.querySelectorAll('img')].some((img) => img.src.includes(uuid) && img.complete && img.naturalWidth > 0),
      outcome.uuid,
      { timeout: 30_000 },
    );
    const thumb = seen.find((s) => s.startsWith('GET ') && s.includes(`${srv.cdn}/${outcome.uuid}/-/`));
    expect(thumb, seen.join('\n')).toMatch(/^GET 200 /);
    expect(seen.filter((s) => !/^\w+ 2\d\d /.test(s))).toEqual([]);
    await page.close();
  });
});
