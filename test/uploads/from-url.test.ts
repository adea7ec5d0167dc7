/** /from_url/ and /from_url/status/ over HTTP: states, options, duplicates, errors, redirects. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { restClient } from '../helpers/rest.js';
import type { Res } from '../helpers/http.js';
import { bytes, get, postForm, postQuery, until } from './helpers.js';
import { startOrigin, type Origin } from './origin.js';

let origin: Origin;
const payload = bytes(200_000, 9);
/** /late-headers answers nothing until `sendHeaders()`, then half the body until origin.release(). */
let sendHeaders: () => void = () => undefined;
const headersSent = new Promise<void>((r) => (sendHeaders = r));

beforeAll(async () => {
  origin = await startOrigin(payload, {
    '/late-headers': (_req, res) => {
      void headersSent.then(() => {
        res.writeHead(200, { 'content-length': String(payload.length) });
        res.write(payload.subarray(0, payload.length / 2));
        void lateGate.then(() => res.end(payload.subarray(payload.length / 2)));
      });
    },
  });
  // Only 127.0.0.1 itself is allowed, so a redirect to 127.0.0.2 is a redirect to a refused address.
});
const srv = useServer({ env: { STOWAGE_OUTBOUND_ALLOW: '127.0.0.1/32' } });
afterAll(async () => {
  origin?.close();
});

const fromUrl = (query: Record<string, string>) => postQuery(`${srv.upload}/from_url/`, { pub_key: srv.keys.public_key, ...query });
const status = (token: string) => get(`${srv.upload}/from_url/status/?token=${encodeURIComponent(token)}&jsonerrors=1`);
const finalStatus = (token: string) =>
  until(async () => {
    const r = await status(token);
    return r.json.status === 'success' || r.json.status === 'error' ? r : undefined;
  });

async function tokenFor(query: Record<string, string>): Promise<string> {
  const r = await fromUrl(query);
  expect(r.status).toBe(200);
  expect(r.json.type).toBe('token');
  expect(Object.keys(r.json).sort()).toEqual(['token', 'type']);
  return r.json.token as string;
}

let openLate: () => void = () => undefined;
const lateGate = new Promise<void>((r) => (openLate = r));

describe('POST /from_url/ and its status', () => {
  it('answers waiting until the origin has answered, then progress with the real total (the SDK tests poll for this order)', async () => {
    const token = await tokenFor({ source_url: `${origin.url}/late-headers` });
    // The fetch has reached the origin, which holds back its headers: the size is not known yet.
    await until(async () => ((origin.hits.get('/late-headers') ?? 0) > 0 ? true : undefined));
    expect((await status(token)).json).toEqual({ status: 'waiting', done: 0, total: 'unknown' });
    sendHeaders();
    const progress = await until(async () => {
      const r = await status(token);
      return r.json.status === 'progress' ? r : undefined;
    });
    expect(progress.json.total).toBe(payload.length);
    openLate();
    expect((await finalStatus(token)).json).toMatchObject({ status: 'success', size: payload.length });
  });

  it('reports progress (done/total) and then success with the file info', async () => {
    const token = await tokenFor({ source_url: `${origin.url}/gated`, store: '1', filename: 'chosen name.bin', 'metadata[a]': 'b' });
    const progress = await until(async () => {
      const r = await status(token);
      return r.json.status === 'progress' && r.json.done > 0 ? r : undefined;
    });
    expect(progress.json).toEqual({ status: 'progress', done: expect.any(Number), total: payload.length });
    expect(progress.json.done).toBeLessThan(payload.length);
    origin.release();
    const done = await finalStatus(token);
    expect(done.json).toMatchObject({ status: 'success', size: payload.length, total: payload.length, done: payload.length, original_filename: 'chosen name.bin', filename: 'chosenname.bin', is_stored: true, is_ready: true, metadata: { a: 'b' } });
    expect(done.json.uuid).toBe(done.json.file_id);
    const cdn = await fetch(`${srv.cdn}/${done.json.uuid}/`);
    expect(Buffer.from(await cdn.arrayBuffer()).equals(payload)).toBe(true);
  });

  it('reports total "unknown" while the size is not declared', async () => {
    const token = await tokenFor({ source_url: `${origin.url}/gated-chunked` });
    const progress = await until(async () => {
      const r = await status(token);
      return r.json.status === 'progress' && r.json.done > 0 ? r : undefined;
    });
    expect(progress.json.total).toBe('unknown');
    origin.release();
    expect((await finalStatus(token)).json.size).toBe(payload.length);
  });

  it('answers waiting with done 0 and total "unknown" while every fetch slot is busy (pyuploadcare reads both)', async () => {
    // The node runs 8 jobs at once: 8 gated downloads hold every slot, so a 9th task waits.
    const busy = await Promise.all(Array.from({ length: 8 }, (_, i) => tokenFor({ source_url: `${origin.url}/gated?slot=${i}` })));
    await until(async () => {
      const states = await Promise.all(busy.map(async (t) => (await status(t)).json.status));
      return states.every((s) => s === 'progress') ? true : undefined;
    });
    const queued = await tokenFor({ source_url: `${origin.url}/plain/data.bin?queued=1` });
    const waiting = await status(queued);
    expect(waiting.json).toEqual({ status: 'waiting', done: 0, total: 'unknown' });
    origin.release();
    const done = await finalStatus(queued);
    expect(done.json).toMatchObject({ status: 'success', size: payload.length });
    for (const t of busy) expect((await finalStatus(t)).json.status).toBe('success');
  });

  it('takes the name from Content-Disposition, else from the URL path; store=0 leaves it unstored', async () => {
    const a = await finalStatus(await tokenFor({ source_url: `${origin.url}/with-disposition`, store: '0' }));
    expect(a.json).toMatchObject({ status: 'success', original_filename: 'from header.txt', is_stored: false });
    const b = await finalStatus(await tokenFor({ source_url: `${origin.url}/plain/data.bin` }));
    expect(b.json.original_filename).toBe('data.bin');
  });

  it('accepts the parameters as a urlencoded body too', async () => {
    const r = await postForm(`${srv.upload}/from_url/`, { pub_key: srv.keys.public_key, source_url: `${origin.url}/plain/data.bin`, filename: 'form.bin' });
    expect(r.json.type).toBe('token');
    expect((await finalStatus(r.json.token)).json.original_filename).toBe('form.bin');
  });

  it('reports download failures as status errors with wire codes', async () => {
    const notFound = await finalStatus(await tokenFor({ source_url: `${origin.url}/nothing-here` }));
    expect(notFound.json).toEqual({ status: 'error', error: 'HTTP client error: 404.', error_code: 'DownloadFileHTTPClientError' });
  });

  it('re-checks every redirect hop against the guard', async () => {
    const port = new URL(origin.url).port;
    for (const to of [`http://127.0.0.2:${port}/plain/data.bin`, 'http://169.254.169.254/latest/meta-data/', 'http://[::1]/']) {
      const r = await finalStatus(await tokenFor({ source_url: `${origin.url}/redirect?to=${encodeURIComponent(to)}` }));
      expect(r.json).toEqual({ status: 'error', error: 'Only public IPs are allowed.', error_code: 'URLHostPrivateIPForbiddenError' });
    }
    // An allowed redirect is followed.
    const ok = await finalStatus(await tokenFor({ source_url: `${origin.url}/redirect?to=${encodeURIComponent('/plain/data.bin')}` }));
    expect(ok.json.size).toBe(payload.length);
  });

  it('answers unknown tokens, a missing token and parameter errors', async () => {
    expect((await get(`${srv.upload}/from_url/status/?token=test`)).json).toEqual({ status: 'unknown' });
    expect((await get(`${srv.upload}/from_url/status/?token=${crypto.randomUUID()}`)).json).toEqual({ status: 'unknown' });
    const missing = await get(`${srv.upload}/from_url/status/`);
    expect([missing.status, missing.text]).toEqual([400, 'token is required.']);
    const noUrl = await fromUrl({});
    expect([noUrl.status, noUrl.text]).toEqual([400, 'source_url is required.']);
    const noKey = await postQuery(`${srv.upload}/from_url/`, { source_url: `${origin.url}/plain/data.bin` });
    expect([noKey.status, noKey.text]).toEqual([403, 'pub_key is required.']);
    const cases: Array<[string, string, string]> = [
      ['example.com/a.png', 'URLSchemeRequiredError', 'No URL scheme supplied.'],
      ['ftp://example.com/a', 'URLSchemeInvalidError', 'Invalid URL scheme.'],
      ['http:///path', 'URLHostRequiredError', 'No URL host supplied.'],
      ['http://exa mple.com/', 'URLHostMalformedError', 'URL host is malformed.'],
      ['http://no-such-host.invalid/', 'HostnameNotFoundError', 'Host does not exist.'],
    ];
    for (const [url, code, text] of cases) {
      const r: Res = await postQuery(`${srv.upload}/from_url/`, { pub_key: srv.keys.public_key, source_url: url, jsonerrors: '1' });
      expect(r.json).toEqual({ error: { status_code: 400, content: text, error_code: code } });
    }
  });
});

describe('URL duplicates', () => {
  it('check_URL_duplicates finds a saved URL; save defaults to check; unsaved and removed files are not found', async () => {
    const url = `${origin.url}/plain/data.bin?dup=1`;
    // Neither flag: the URL is not remembered.
    const plain = await finalStatus(await tokenFor({ source_url: url }));
    const checked = await fromUrl({ source_url: url, check_URL_duplicates: '1' });
    expect(checked.json.type).toBe('token');
    const saved = await finalStatus(checked.json.token);
    expect(saved.json.uuid).not.toBe(plain.json.uuid);
    // check=1 implied save=1 above, so now the duplicate is found.
    const hits = origin.hits.get('/plain/data.bin') ?? 0;
    const dup = await fromUrl({ source_url: url, check_URL_duplicates: '1' });
    expect(dup.json).toMatchObject({ type: 'file_info', uuid: saved.json.uuid, file_id: saved.json.uuid, size: payload.length, is_ready: true });
    expect(origin.hits.get('/plain/data.bin')).toBe(hits);
    // A removed file is no duplicate; with save=0 the new fetch is not remembered either.
    const rest = restClient(srv.rest, srv.keys);
    expect((await rest('DELETE', `/files/${saved.json.uuid}/storage/`)).status).toBe(200);
    const afterRemoval = await fromUrl({ source_url: url, check_URL_duplicates: '1', save_URL_duplicates: '0' });
    expect(afterRemoval.json.type).toBe('token');
    await finalStatus(afterRemoval.json.token);
    expect((await fromUrl({ source_url: url, check_URL_duplicates: '1' })).json.type).toBe('token');
  });
});
