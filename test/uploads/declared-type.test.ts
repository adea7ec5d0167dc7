/**
 * `mime_type` is what the client declared (or the name's extension's type), `content_info.mime`
 * what the bytes are, on every surface that shows a file; the CDN serves by the
 * bytes only, so a declaration never turns a file into active content.
 */
import { uploadFile } from '@uploadcare/upload-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { uploadBase } from '../helpers/rest.js';
import { bytes, get, postForm, postQuery, until } from './helpers.js';
import { startOrigin, type Origin } from './origin.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';

let origin: Origin;
let hooks: Receiver;

const HTML = '<!doctype html><html><body><script>alert(document.domain)</script></body></html>\n';
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script><rect width="10" height="10"/></svg>';

beforeAll(async () => {
  origin = await startOrigin(Buffer.alloc(0), {
    '/report': (_req, res) => {
      res.writeHead(200, { 'content-type': 'Text/CSV; charset=utf-8' });
      res.end('a,b\n1,2\n');
    },
    '/page.html': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(HTML);
    },
  });
  hooks = await startReceiver();
});
const srv = useServer({ env: { STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8' } });
beforeAll(async () => {
  const hook = await srv.call('POST', '/webhooks/', { body: new URLSearchParams({ target_url: hooks.url, event: 'file.uploaded' }).toString(), contentType: 'application/x-www-form-urlencoded' });
  expect(hook.status).toBe(201);
});
afterAll(async () => {
  origin?.close();
  await hooks?.close();
});

async function base(name: string, data: Buffer | string, type: string): Promise<string> {
  const r = await uploadBase(srv.upload, srv.keys.public_key, [{ name, data, type }], { UPLOADCARE_STORE: '1' });
  expect(r.status, r.text).toBe(200);
  return r.json.file as string;
}

const info = async (uuid: string) => (await get(`${srv.upload}/info/?pub_key=${srv.keys.public_key}&file_id=${uuid}`)).json;
const rest = async (uuid: string) => (await srv.call('GET', `/files/${uuid}/`)).json;

/** Both file objects agree: `mime_type` declared, `content_info.mime` sniffed. */
async function expectTypes(uuid: string, declared: string, sniffed: string): Promise<void> {
  for (const f of [await info(uuid), await rest(uuid)]) {
    expect(f.mime_type).toBe(declared);
    expect(f.content_info.mime).toEqual({ mime: sniffed, type: sniffed.split('/')[0], subtype: sniffed.split('/')[1] });
  }
}

describe('direct uploads (/base/)', () => {
  it('keeps the type the part declared, as pyuploadcare sends it; content_info.mime is the sniffed type', async () => {
    const uuid = await base('_mem.exe', '0'.repeat(1000), 'application/x-msdos-program');
    await expectTypes(uuid, 'application/x-msdos-program', 'text/plain');
    expect((await info(uuid)).is_image).toBe(false);
  });

  it('takes the extension’s type when the declared one is generic, and keeps octet-stream without an extension', async () => {
    await expectTypes(await base('_mem.exe', '0'.repeat(1000), 'application/octet-stream'), 'application/x-msdownload', 'text/plain');
    await expectTypes(await base('five', 'hello', 'application/octet-stream'), 'application/octet-stream', 'text/plain');
    // Parameters and case of the declaration do not reach the wire.
    await expectTypes(await base('notes', 'a,b\n', 'Text/CSV; charset=UTF-8'), 'text/csv', 'text/plain');
  });

  it('an image declared as text keeps its declaration, and is still an image', async () => {
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64');
    const uuid = await base('pixel', png, 'text/plain');
    await expectTypes(uuid, 'text/plain', 'image/png');
    expect((await info(uuid)).is_image).toBe(true);
    // A part without a Content-Type is text/plain by RFC 7578: a known extension wins over that.
    await expectTypes(await base('pixel.png', png, 'text/plain'), 'image/png', 'image/png');
  });
});

describe('the CDN serves by the bytes, never by the declaration', () => {
  it('HTML declared text/html is served as text/plain, attachment, nosniff', async () => {
    const uuid = await base('page.html', HTML, 'text/html');
    await expectTypes(uuid, 'text/html', 'text/plain');
    const r = await fetch(`${srv.cdn}/${uuid}/`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/plain');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('content-disposition')).toMatch(/^attachment/);
    expect(await r.text()).toBe(HTML);
  });

  it('plain text declared image/svg+xml is not served as SVG; SVG declared text/plain is still sandboxed', async () => {
    const text = await base('x.svg', 'just words', 'image/svg+xml');
    await expectTypes(text, 'image/svg+xml', 'text/plain');
    const t = await fetch(`${srv.cdn}/${text}/`);
    expect(t.headers.get('content-type')).toBe('text/plain');
    expect(t.headers.get('content-disposition')).toMatch(/^attachment/);

    const svg = await base('x.txt', SVG, 'text/plain');
    await expectTypes(svg, 'text/plain', 'image/svg+xml');
    const s = await fetch(`${srv.cdn}/${svg}/`);
    expect(s.headers.get('content-type')).toBe('image/svg+xml');
    expect(s.headers.get('content-security-policy')).toMatch(/^sandbox/);
  });
});

describe('the official JS client', () => {
  it('direct: a Buffer with a name is typed by its extension, an explicit contentType is kept', async () => {
    const named = await uploadFile(Buffer.from('a,b\n1,2\n'), { publicKey: srv.keys.public_key, baseURL: srv.upload, baseCDN: srv.cdn, fileName: 'table.csv' });
    expect(named.mimeType).toBe('text/csv');
    await expectTypes(named.uuid, 'text/csv', 'text/plain');
    const typed = await uploadFile(Buffer.from('{"a":1}'), { publicKey: srv.keys.public_key, baseURL: srv.upload, baseCDN: srv.cdn, contentType: 'application/json' });
    expect(typed.mimeType).toBe('application/json');
    // No name, no type: the client sends `original` and application/octet-stream.
    const bare = await uploadFile(Buffer.from('plain words'), { publicKey: srv.keys.public_key, baseURL: srv.upload, baseCDN: srv.cdn });
    expect(bare.mimeType).toBe('application/octet-stream');
    await expectTypes(bare.uuid, 'application/octet-stream', 'text/plain');
  });

  it('multipart: the content_type given at start is the file’s mime_type', async () => {
    const data = bytes(11 * 1024 * 1024, 3);
    const file = await uploadFile(data, {
      publicKey: srv.keys.public_key,
      baseURL: srv.upload,
      baseCDN: srv.cdn,
      fileName: 'archive.bin',
      contentType: 'application/x-custom-archive',
      multipartMinFileSize: 10 * 1024 * 1024,
    });
    expect(file.size).toBe(data.length);
    expect(file.mimeType).toBe('application/x-custom-archive');
    await expectTypes(file.uuid, 'application/x-custom-archive', 'application/octet-stream');
  });
});

describe('multipart over HTTP, from_url, groups and webhooks', () => {
  it('/multipart/complete/ answers the declared type', async () => {
    const size = 10_485_760;
    const start = await postForm(`${srv.upload}/multipart/start/`, { UPLOADCARE_PUB_KEY: srv.keys.public_key, filename: 'tune.mp3', content_type: 'application/octet-stream', size: String(size) });
    expect(start.status, start.text).toBe(200);
    const data = bytes(size, 5);
    const parts = start.json.parts as string[];
    const partSize = Math.ceil(size / parts.length);
    for (const [i, url] of parts.entries()) {
      const put = await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: data.subarray(i * partSize, (i + 1) * partSize) });
      expect(put.status).toBe(200);
    }
    const done = await postForm(`${srv.upload}/multipart/complete/`, { UPLOADCARE_PUB_KEY: srv.keys.public_key, uuid: start.json.uuid });
    expect(done.status, done.text).toBe(200);
    expect(done.json.mime_type).toBe('audio/mpeg');
    expect(done.json.content_info.mime.mime).toBe('application/octet-stream');
  });

  it('/from_url/status/ answers the remote Content-Type, else the extension’s type; the CDN still serves by the bytes', async () => {
    const status = async (sourceUrl: string) => {
      const t = await postQuery(`${srv.upload}/from_url/`, { pub_key: srv.keys.public_key, source_url: sourceUrl });
      expect(t.json.type, t.text).toBe('token');
      return until(async () => {
        const r = await get(`${srv.upload}/from_url/status/?token=${t.json.token}`);
        return r.json.status === 'success' || r.json.status === 'error' ? r.json : undefined;
      });
    };
    const csv = await status(`${origin.url}/report`);
    expect(csv).toMatchObject({ status: 'success', mime_type: 'text/csv', content_info: { mime: { mime: 'text/plain' } } });
    const page = await status(`${origin.url}/page.html`);
    expect(page).toMatchObject({ status: 'success', mime_type: 'text/html', content_info: { mime: { mime: 'text/plain' } } });
    const served = await fetch(`${srv.cdn}/${page.uuid}/`);
    expect(served.headers.get('content-type')).toBe('text/plain');
  });

  it('group entries and webhook payloads carry the declared type', async () => {
    const uuid = await base('_mem.exe', '0'.repeat(1000), 'application/x-msdos-program');
    const group = await postForm(`${srv.upload}/group/`, { pub_key: srv.keys.public_key, 'files[0]': uuid });
    expect(group.status, group.text).toBe(200);
    expect(group.json.files[0]).toMatchObject({ uuid, mime_type: 'application/x-msdos-program', content_info: { mime: { mime: 'text/plain' } } });
    const restGroup = await srv.call('GET', `/groups/${group.json.id}/`);
    expect(restGroup.json.files[0]).toMatchObject({ uuid, mime_type: 'application/x-msdos-program' });
    const [hit] = await hooks.waitFor(1, 20_000, (r) => r.json?.data?.uuid === uuid);
    expect(hit!.json.data).toMatchObject({ mime_type: 'application/x-msdos-program', content_info: { mime: { mime: 'text/plain' } } });
  });
});
