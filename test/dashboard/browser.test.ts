/**
 * The dashboard in a real browser (Debian's chromium driven by playwright-core) against a started
 * Stowage: sign in with the project's keys, the files list with CDN thumbnails and search, a
 * hostile filename shown as text, the file page (metadata edited and read back over REST, the CDN
 * URL builder's live preview), groups, a webhook's delivery log, an upload through the official
 * widget, sign-out. Screenshots go to test-artifacts/dashboard/ (gitignored). Skipped without
 * chromium, as the widget suite is.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, testS3 } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { makeGroup, png } from '../groups/helpers.js';
import { makePdf, makeVideo } from '../conversions/helpers.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = path.join(ROOT, 'test-artifacts', 'dashboard');
const HOSTILE = '<img src=x onerror=window.__pwned=1>.png';

let receiver: Receiver;
let browser: Browser;
let page: Page;
/** Console errors and failed requests the page met (CSP violations show up here). */
const problems: string[] = [];
let imageUuid = '';
let textUuid = '';

/** With object storage the browser PUTs multipart parts to the bucket: the CORS rule docs/scale-out.md asks operators for. */
async function allowBrowserParts(bucket: string, origin: string): Promise<void> {
  const { PutBucketCorsCommand } = await import('@aws-sdk/client-s3');
  const s3 = await testS3();
  await s3.client.send(new PutBucketCorsCommand({
    Bucket: bucket,
    CORSConfiguration: { CORSRules: [{ AllowedOrigins: [origin], AllowedMethods: ['PUT'], AllowedHeaders: ['*'], ExposeHeaders: ['ETag'] }] },
  }));
}

const shot = (name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });

describe.skipIf(!fs.existsSync(CHROMIUM))('dashboard in chromium', () => {
  const srv = useServer(async () => {
    receiver = await startReceiver();
    return { env: { STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8' } };
  });

  beforeAll(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    // A subscription first, so the upload below makes a delivery row.
    const hook = await srv.call('POST', '/webhooks/', { body: JSON.stringify({ target_url: receiver.url, event: 'file.uploaded' }) });
    expect(hook.status, hook.text).toBe(201);
    imageUuid = await srv.uploadFile(HOSTILE, await png(640, 400), { type: 'image/png' });
    textUuid = await srv.uploadFile('notes.txt', 'plain text, not an image');
    await receiver.waitFor(2);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    // The copy buttons write to the clipboard; the tests read it back.
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: srv.rest });
    page = await context.newPage();
    // The widget reports telemetry to the hosted service; nothing outside this machine is reachable.
    await page.route((url) => !url.hostname.startsWith('127.0.0.1'), (route) => route.abort());
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(String(e)));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
  });

  it('signs in with the project keys and lists files with loaded CDN thumbnails, the hostile name as text', async () => {
    // The way a new user comes: the REST URL the banner prints, then its link to the dashboard.
    await page.goto(`${srv.rest}/`);
    await page.click('a[href="/dashboard/"]');
    await page.locator('#sign-in').waitFor();
    // Signed out: no navigation and no "Sign out".
    expect(await page.locator('#top').isVisible()).toBe(false);
    expect(await page.locator('#logout').isVisible()).toBe(false);
    await page.fill('#public_key', srv.keys.public_key);
    await page.fill('#secret_key', srv.keys.secret_key);
    await page.click('#sign-in button[type=submit]');
    const row = page.locator(`tr[data-uuid="${imageUuid}"]`);
    await row.waitFor();
    await page.waitForFunction((uuid) => {
      const img = document.querySelector<HTMLImageElement>(`tr[data-uuid="${uuid}"] img.thumb`);
      return img !== null && img.complete && img.naturalWidth > 0;
    }, imageUuid);
    expect(await row.locator('img.thumb').getAttribute('src')).toContain(`/${imageUuid}/-/preview/`);
    expect(await row.locator('a.filename').textContent()).toBe(HOSTILE);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('tr[data-uuid] img[src="x"]').count()).toBe(0);
    expect(await page.locator('#total').textContent()).toBe('2 files');
    // The cookie is not readable by the page's scripts.
    expect(await page.evaluate(() => document.cookie)).toBe('');
    await shot('01-files');
  });

  it('filters by type and searches by name', async () => {
    await page.selectOption('#filter-type', 'other');
    await page.waitForFunction(() => document.querySelector('#total')?.textContent === '1 file');
    expect(await page.locator('a.filename').allTextContents()).toEqual(['notes.txt']);
    await page.selectOption('#filter-type', 'any');
    await page.fill('#search', 'onerror');
    await page.click('.filters button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#total')?.textContent === '1 file');
    expect(await page.locator('a.filename').allTextContents()).toEqual([HOSTILE]);
  });

  it('opens the file, edits metadata and tags, and the REST API reads them back', async () => {
    await page.locator(`tr[data-uuid="${imageUuid}"] a.filename`).click();
    await page.locator('#file-name').waitFor();
    expect(await page.locator('#file-name').textContent()).toBe(HOSTILE);
    expect(JSON.parse((await page.locator('#content-info').textContent()) ?? 'null')).toMatchObject({ image: { width: 640, height: 400 } });
    await page.fill('#meta-key', 'colour');
    await page.fill('#meta-value', '<b>blue</b>');
    await page.click('#meta-add button[type=submit]');
    await page.locator('tr[data-key="colour"]').waitFor();
    let meta = await srv.call('GET', `/files/${imageUuid}/metadata/`);
    expect(meta.json).toEqual({ colour: '<b>blue</b>' });
    await page.fill('tr[data-key="colour"] input', 'green');
    // A save re-renders the page once its answer arrives, which can be after the REST API shows
    // the save. The tags below must go into the new page: typed into the old one, they are lost
    // when it is replaced, and the click then saves the new page's empty field.
    await page.locator('#file-name').evaluate((el) => el.setAttribute('data-before-save', ''));
    await page.click('tr[data-key="colour"] button.save-meta');
    await expect.poll(async () => (await srv.call('GET', `/files/${imageUuid}/metadata/`)).json).toEqual({ colour: 'green' });
    await page.locator('#file-name:not([data-before-save])').waitFor();
    await page.fill('#tags', 'Holiday, beach');
    await page.click('#tags + button');
    await expect.poll(async () => (await srv.call('GET', `/files/${imageUuid}/tags/`)).json).toEqual({ tags: ['holiday', 'beach'] });
    meta = await srv.call('GET', `/files/${imageUuid}/metadata/`);
    expect(meta.json).toEqual({ colour: 'green' });
  });

  it('builds a CDN URL and the live preview follows it', async () => {
    // The size label and the loaded image together: the previous test's save re-renders the page,
    // so a label of the page being replaced can show the size while the new preview still loads.
    const previewShows = (label: string, width: number) =>
      page.waitForFunction(([l, w]) => {
        const img = document.querySelector<HTMLImageElement>('#cdn-preview');
        return document.querySelector('#preview-size')?.textContent === l && img !== null && img.complete && img.naturalWidth === w;
      }, [label, width] as const);
    await previewShows('400×250', 400);
    await page.fill('#op-width', '100');
    await page.dispatchEvent('#op-width', 'change');
    await page.selectOption('#op-format', 'webp');
    await previewShows('100×63', 100);
    // The URL shown whole (wrapped, not cut off in a field), and the copy button copies it.
    const built = `${srv.cdn}/${imageUuid}/-/preview/100x400/-/format/webp/`;
    expect(await page.locator('#cdn-url').textContent()).toBe(built);
    expect(await page.locator('#cdn-url').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    await page.click('#copy-built-url');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(built);
    await shot('02-file');
  });

  it("a file that is not an image: its page shows no stray text (no literal null)", async () => {
    await page.goto(`${srv.rest}/dashboard/#/files/${textUuid}`);
    await page.locator('#file-name', { hasText: 'notes.txt' }).waitFor();
    const stray = await page.evaluate(() => [...document.querySelectorAll('section.page')].flatMap((v) => [...v.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent)));
    expect(stray).toEqual([]);
    expect(await page.locator('#url-builder').count()).toBe(0);
  });

  it('lists groups', async () => {
    const groupId = await makeGroup(srv.server, srv.keys, [imageUuid]);
    await page.click('nav a[href="#/groups"]');
    const row = page.locator(`tr[data-group="${groupId}"]`);
    await row.waitFor();
    await row.locator('button.show-files').click();
    await page.waitForFunction((uuid) => {
      const img = document.querySelector<HTMLImageElement>(`.group-files a[href="#/files/${uuid}"] img`);
      return img !== null && img.complete && img.naturalWidth > 0;
    }, imageUuid);
    await shot('03-groups');
  });

  it('shows a webhook with its delivery log, and disables it', async () => {
    await page.click('nav a[href="#/webhooks"]');
    const row = page.locator('tr[data-webhook]', { hasText: receiver.url });
    await row.waitFor();
    await row.locator('button.show-deliveries').click();
    // The log is a table of its own, in a full-width row under its subscription.
    const log = page.locator('tr.deliveries-row:not([hidden])');
    await log.locator('td.status').first().waitFor();
    expect(await log.locator('td.status').allTextContents()).toEqual(['200', '200']);
    expect(await log.locator('th').allTextContents()).toEqual(['Started', 'Event', 'Attempt', 'HTTP status', 'Took', 'Error']);
    await shot('04-webhooks');
    await row.locator('button.toggle').click();
    await page.waitForFunction(() => document.querySelector('tr[data-webhook] td.state')?.textContent === 'disabled');
    const hooks = await srv.call('GET', '/webhooks/');
    expect(hooks.json).toMatchObject([{ target_url: receiver.url, is_active: false }]);
  });

  it('uploads a file through the official widget and finds it in the list', async () => {
    await page.click('nav a[href="#/upload"]');
    await page.waitForFunction(() => typeof (document.getElementById('upload-ctx') as unknown as { getAPI?: unknown } | null)?.getAPI === 'function');
    // The sources offered: this computer, a link, the camera (no Dropbox or Google Drive: they need the hosted service).
    await page.locator('uc-file-uploader-regular button').first().click();
    await page.locator('uc-source-btn', { hasText: 'From device' }).waitFor();
    expect((await page.locator('uc-source-btn').allTextContents()).map((t) => t.trim())).toEqual(['From device', 'From link', 'Camera']);
    await shot('05-upload');
    await page.keyboard.press('Escape');
    await page.evaluate(async () => {
      const api = (document.getElementById('upload-ctx') as unknown as { getAPI(): { addFileFromObject(file: File): void; uploadAll(): void } }).getAPI();
      const canvas = new OffscreenCanvas(300, 200);
      const g = canvas.getContext('2d')!;
      g.fillStyle = '#3a7bd5';
      g.fillRect(0, 0, 300, 200);
      api.addFileFromObject(new File([await canvas.convertToBlob({ type: 'image/png' })], 'from-widget.png', { type: 'image/png' }));
      api.uploadAll();
    });
    const link = page.locator('#uploaded li a');
    await link.waitFor({ timeout: 30_000 });
    const uuid = ((await link.getAttribute('href')) ?? '').replace('#/files/', '');
    expect(uuid).toMatch(/^[0-9a-f-]{36}$/);
    await shot('05-uploaded');
    await page.click('nav a[href="#/files"]');
    await page.locator(`tr[data-uuid="${uuid}"] a.filename`, { hasText: 'from-widget.png' }).waitFor();
    const info = await srv.call('GET', `/files/${uuid}/`);
    expect(info.json).toMatchObject({ original_filename: 'from-widget.png', is_image: true });
  });

  it('with object storage, the widget PUTs multipart parts straight to the bucket (the CSP allows it)', async (t) => {
    const bucket = srv.server.bucket;
    if (!bucket) return t.skip();
    await allowBrowserParts(bucket, srv.rest);
    const endpoint = (await testS3()).env(bucket)['STOWAGE_S3_ENDPOINT']!;
    const puts: string[] = [];
    page.on('response', (r) => {
      if (r.request().method() === 'PUT' && r.url().startsWith(endpoint)) puts.push(String(r.status()));
    });
    await page.click('nav a[href="#/upload"]');
    await page.waitForFunction(() => typeof (document.getElementById('upload-ctx') as unknown as { getAPI?: unknown } | null)?.getAPI === 'function');
    // Above the widget's 25 MiB multipart threshold.
    await page.evaluate(() => {
      const api = (document.getElementById('upload-ctx') as unknown as { getAPI(): { addFileFromObject(file: File): void; uploadAll(): void } }).getAPI();
      api.addFileFromObject(new File([new Uint8Array(26 * 1024 * 1024).fill(7)], 'big.bin', { type: 'application/octet-stream' }));
      api.uploadAll();
    });
    const link = page.locator('#uploaded li a', { hasText: 'big.bin' });
    await link.waitFor({ timeout: 60_000 });
    expect(puts.length).toBeGreaterThanOrEqual(2);
    expect(puts.every((s) => s === '200')).toBe(true);
    const uuid = ((await link.getAttribute('href')) ?? '').replace('#/files/', '');
    expect((await srv.call('GET', `/files/${uuid}/`)).json).toMatchObject({ size: 26 * 1024 * 1024 });
  }, 120_000);

  it('pages through the list with Next and Previous', async () => {
    // 3 files so far (4 with object storage); 20 more make a second page (pages of 20).
    const before = srv.server.bucket ? 4 : 3;
    for (let i = 0; i < 20; i++) await srv.uploadFile(`bulk-${String(i).padStart(2, '0')}.txt`, `file ${i}`);
    await page.goto(`${srv.rest}/dashboard/#/files`);
    await page.reload(); // the list as it is now (goto to the same URL changes nothing)
    await page.waitForFunction((n) => document.querySelector('#total')?.textContent === `${n} files`, 20 + before);
    const names = () => page.locator('a.filename').allTextContents();
    const first = await names();
    expect(first).toHaveLength(20);
    await page.click('.pager button:has-text("Next")');
    await page.waitForFunction((n) => document.querySelectorAll('a.filename').length === n, before);
    const second = await names();
    expect(second.filter((n) => first.includes(n))).toEqual([]);
    expect([...first, ...second].sort()).toContain(HOSTILE);
    expect(await page.locator('.pager button:has-text("Next")').isDisabled()).toBe(true);
    await page.click('.pager button:has-text("Previous")');
    await page.waitForFunction(() => document.querySelectorAll('a.filename').length === 20);
    expect(await names()).toEqual(first);
    await page.fill('#search', 'bu');
    await page.click('.filters button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#search-hint')?.textContent !== '');
    expect(await page.locator('#total').textContent()).toBe(`${20 + before} files`);
  });

  it('shows usage, finds a short term as an extension, and sorts by a column', async () => {
    await page.goto(`${srv.rest}/dashboard/#/files`);
    await page.reload();
    const live = (await srv.call('GET', '/files/?limit=1')).json as { total: number };
    await page.waitForFunction((n) => document.querySelector('#usage-total b')?.textContent === String(n), live.total);
    expect(await page.locator('#usage-removed b').textContent()).toBe('0');
    await page.fill('#search', 'txt');
    await page.click('.filters button[type=submit]');
    await page.waitForFunction(() => /extension/.test(document.querySelector('#search-hint')?.textContent ?? ''));
    await page.waitForFunction(() => [...document.querySelectorAll('a.filename')].every((a) => a.textContent?.endsWith('.txt')));
    await page.waitForFunction(() => document.querySelector('#total')?.textContent === '21 files');
    await page.fill('#search', '');
    await page.click('.filters button[type=submit]');
    await page.click('span.sort[data-sort="original_filename"]');
    await page.waitForFunction(() => document.querySelector('span.sort[data-sort="original_filename"]')?.getAttribute('aria-sort') === 'ascending');
    const names = await page.locator('a.filename').allTextContents();
    expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    await page.click('span.sort[data-sort="size"]');
    await page.waitForFunction(() => document.querySelector('span.sort[data-sort="size"]')?.getAttribute('aria-sort') === 'ascending');
  });

  it('selects files to store together, then to remove together', async () => {
    const a = await srv.uploadFile('select-a.txt', 'a', { store: false });
    const b = await srv.uploadFile('select-b.txt', 'b', { store: false });
    await page.goto(`${srv.rest}/dashboard/#/files`);
    await page.reload();
    await page.selectOption('#filter-state', 'unstored');
    for (const id of [a, b]) await page.locator(`tr[data-uuid="${id}"] input.select`).check();
    expect(await page.locator('#selected-count').textContent()).toBe('2 selected');
    await page.click('#store-selected');
    await expect.poll(async () => Promise.all([a, b].map(async (id) => Boolean(((await srv.call('GET', `/files/${id}/`)).json as { datetime_stored: string | null }).datetime_stored)))).toEqual([true, true]);
    await page.selectOption('#filter-state', 'stored');
    for (const id of [a, b]) await page.locator(`tr[data-uuid="${id}"] input.select`).check();
    page.once('dialog', (d) => void d.accept());
    await page.click('#remove-selected');
    await expect.poll(async () => Promise.all([a, b].map(async (id) => Boolean(((await srv.call('GET', `/files/${id}/`)).json as { datetime_removed: string | null }).datetime_removed)))).toEqual([true, true]);
  });

  it("previews a PDF's first page, a video in a player, and text; downloads and copies", async () => {
    const pdf = await srv.uploadFile('letter.pdf', makePdf(2, 300, 400), { type: 'application/pdf' });
    const video = await srv.uploadFile('clip.webm', makeVideo('clip.webm', 1, '160x120', ['-c:v', 'libvpx', '-b:v', '200k', '-an'], false), { type: 'video/webm' });
    const text = await srv.uploadFile('readme.txt', 'first line\nsecond <b>line</b>\n');
    await page.goto(`${srv.rest}/dashboard/#/files/${pdf}`);
    await page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('#preview img.page');
      return img !== null && img.complete && img.naturalWidth > 0;
    }, undefined, { timeout: 60_000 });
    expect(await page.locator('#preview-note').textContent()).toBe('First page');
    await shot('08-pdf-file');
    // The download link answers the bytes as an attachment.
    const download = (await page.locator('#download').getAttribute('href')) ?? '';
    const got = await fetch(download);
    expect(got.headers.get('content-disposition')).toMatch(/^attachment/);
    expect(Buffer.from(await got.arrayBuffer()).subarray(0, 5).toString()).toBe('%PDF-');
    await page.click('#copy-uuid');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(pdf);
    await page.click('#copy-url');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`${srv.cdn}/${pdf}/letter.pdf`);

    await page.goto(`${srv.rest}/dashboard/#/files/${video}`);
    await page.waitForFunction(() => (document.querySelector<HTMLVideoElement>('#preview video')?.videoWidth ?? 0) > 0, undefined, { timeout: 30_000 });
    expect(await page.locator('#preview video').evaluate((v: HTMLVideoElement) => [v.videoWidth, v.videoHeight, v.controls])).toEqual([160, 120, true]);

    await page.goto(`${srv.rest}/dashboard/#/files/${text}`);
    await page.locator('#preview pre').waitFor();
    expect(await page.locator('#preview pre').textContent()).toBe('first line\nsecond <b>line</b>\n');
    // The first page made once: the CDN path of the document's PNG now answers.
    expect((await fetch(`${srv.cdn}/${pdf}/document/-/format/png/-/page/1/`)).status).toBe(200);
    // The first look at the document found no PNG yet (the CDN's 404, expected).
    problems.splice(0, problems.length, ...problems.filter((p) => !/status of 404/.test(p)));
  }, 90_000);

  it("runs a conversion and an add-on from a file's page and shows their results", async () => {
    const pdf = await srv.uploadFile('to-text.pdf', makePdf(1, 300, 400), { type: 'application/pdf' });
    await page.goto(`${srv.rest}/dashboard/#/files/${pdf}`);
    await page.locator('#convert-format').waitFor();
    await page.selectOption('#convert-format', 'txt');
    await page.click('#convert-run');
    const made = page.locator('#process-results li.done a.result-file');
    await made.waitFor({ timeout: 60_000 });
    const result = (await made.textContent()) ?? '';
    expect((await srv.call('GET', `/files/${result}/`)).json).toMatchObject({ uuid: result });
    expect(await (await fetch(`${srv.cdn}/${result}/`)).text()).toContain('Page 1');

    await page.goto(`${srv.rest}/dashboard/#/files/${imageUuid}`);
    await page.selectOption('#addon-name', 'aws_rekognition_detect_labels');
    await page.click('#addon-run');
    await page.locator('#process-results li.done').waitFor({ timeout: 90_000 });
    // The page reloads the file: its appdata shows the add-on's result.
    await page.waitForFunction(() => (document.querySelector('#appdata')?.textContent ?? '').includes('aws_rekognition_detect_labels'), undefined, { timeout: 30_000 });
    await shot('09-processed');
  }, 180_000);

  it('groups: a zip of the files from the CDN, and delete', async () => {
    const groupId = await makeGroup(srv.server, srv.keys, [imageUuid]);
    await page.goto(`${srv.rest}/dashboard/#/groups`);
    const row = page.locator(`tr[data-group="${groupId}"]`);
    await row.waitFor();
    const zip = await fetch((await row.locator('a.zip').getAttribute('href')) ?? '');
    expect(zip.status).toBe(200);
    expect(Buffer.from(await zip.arrayBuffer()).subarray(0, 2).toString()).toBe('PK');
    page.once('dialog', (d) => void d.accept());
    await row.locator('button.delete-group').click();
    await row.waitFor({ state: 'detached' });
    expect((await srv.call('GET', `/groups/${groupId}/`)).status).toBe(404);
  });

  it('signs out: the session no longer opens the REST API', async () => {
    // No page broke a CSP rule, threw, or called out (the widget's telemetry is switched off).
    expect(problems).toEqual([]);
    await page.click('#logout');
    await page.locator('#sign-in').waitFor();
    const status = await page.evaluate(async () => (await fetch('/files/', { headers: { accept: 'application/vnd.svc-v0.7+json', 'x-stowage-dashboard': '1' } })).status);
    expect(status).toBe(401);
    await shot('06-signed-out');
  });
  it('a project with signed uploads and signed CDN URLs: the widget uploads with a signature the server makes, thumbnails carry a token', async () => {
    problems.length = 0; // the sign-out test's own 401 probe
    const keys = await srv.server.createProject();
    srv.server.cli(['project', 'set', '--pub-key', keys.public_key, '--signed-uploads', 'on', '--signed-cdn', 'on']);
    await page.goto(`${srv.rest}/dashboard/`);
    await page.fill('#public_key', keys.public_key);
    await page.fill('#secret_key', keys.secret_key);
    await page.click('#sign-in button[type=submit]');
    await page.locator('#total').waitFor();
    await page.click('nav a[href="#/upload"]');
    await page.waitForFunction(() => typeof (document.getElementById('upload-ctx') as unknown as { getAPI?: unknown } | null)?.getAPI === 'function');
    await page.evaluate(async () => {
      const api = (document.getElementById('upload-ctx') as unknown as { getAPI(): { addFileFromObject(file: File): void; uploadAll(): void } }).getAPI();
      const canvas = new OffscreenCanvas(120, 80);
      const g = canvas.getContext('2d')!;
      g.fillStyle = '#d53a7b';
      g.fillRect(0, 0, 120, 80);
      api.addFileFromObject(new File([await canvas.convertToBlob({ type: 'image/png' })], 'signed.png', { type: 'image/png' }));
      api.uploadAll();
    });
    const link = page.locator('#uploaded li a');
    await link.waitFor({ timeout: 30_000 });
    const uuid = ((await link.getAttribute('href')) ?? '').replace('#/files/', '');
    expect(uuid).toMatch(/^[0-9a-f-]{36}$/);
    await page.click('nav a[href="#/files"]');
    await page.waitForFunction((id) => {
      const img = document.querySelector<HTMLImageElement>(`tr[data-uuid="${id}"] img.thumb`);
      return img !== null && img.complete && img.naturalWidth > 0;
    }, uuid);
    const src = (await page.locator(`tr[data-uuid="${uuid}"] img.thumb`).getAttribute('src')) ?? '';
    expect(src).toMatch(/\?token=exp=\d+~acl=\/\*~hmac=[0-9a-f]{64}$/);
    // The CDN does want the token, and the Upload API a signature: the page did not get around them.
    expect((await fetch(src.replace(/\?token=.*$/, ''))).status).toBe(403);
    const unsigned = new FormData();
    unsigned.append('UPLOADCARE_PUB_KEY', keys.public_key);
    unsigned.append('file', new Blob(['x']), 'x.txt');
    expect((await fetch(`${srv.upload}/base/`, { method: 'POST', body: unsigned })).status).toBe(400);
    expect(problems).toEqual([]);
    // Secret-derived answers only to the pages' own calls (the dashboard header).
    const headerless = await page.evaluate(async () => {
      const a = await fetch('/dashboard/api/upload-signature');
      const b = await fetch('/dashboard/api/session');
      return [a.status, b.status];
    });
    expect(headerless).toEqual([401, 401]);
    await shot('07-signed-project');
  });
});
