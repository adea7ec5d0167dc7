import crypto from 'node:crypto';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { uploadBase } from '../helpers/rest.js';

const srv = useServer();
let textUuid: string;
let imageUuid: string;
const bytes = crypto.randomBytes(100_000);
let binUuid: string;

beforeAll(async () => {
  textUuid = (await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'hello world.txt', data: 'hello\n' }])).json.file;
  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#123456' } }).png().toBuffer();
  imageUuid = (await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'pic.png', data: png }])).json.file;
  binUuid = (await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'Северина паспорт.bin', data: bytes }])).json.file;
});

describe('CDN raw delivery', () => {
  it('serves the bytes with type, strong ETag (MD5), immutable caching and CORS', async () => {
    const r = await fetch(`${srv.cdn}/${textUuid}/`);
    expect(r.status).toBe(200);
    expect(await r.text()).toBe('hello\n');
    expect(r.headers.get('content-type')).toBe('text/plain');
    expect(r.headers.get('etag')).toBe('"b1946ac92492d2347c6235b4d2611184"');
    expect(r.headers.get('cache-control')).toContain('immutable');
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('content-disposition')).toBe('attachment; filename="hello world.txt"');
  });

  it('is inline for images, takes the filename from the URL, and honours -/inline/', async () => {
    const img = await fetch(`${srv.cdn}/${imageUuid}/`);
    expect(img.headers.get('content-disposition')).toBe('inline; filename="pic.png"');
    const named = await fetch(`${srv.cdn}/${textUuid}/report@2024&v_1.txt`);
    expect(named.headers.get('content-disposition')).toBe('attachment; filename="report@2024&v_1.txt"');
    const inline = await fetch(`${srv.cdn}/${textUuid}/-/inline/yes/`);
    expect(inline.headers.get('content-disposition')).toBe('inline; filename="hello world.txt"');
    const attach = await fetch(`${srv.cdn}/${imageUuid}/-/inline/no/x.png`);
    expect(attach.headers.get('content-disposition')).toBe('attachment; filename="x.png"');
    expect(await fetch(`${srv.cdn}/${textUuid}/-/inline/maybe/`).then((r) => r.status)).toBe(400);
    // Characters outside pchar must be percent-encoded in the filename.
    const encoded = await fetch(`${srv.cdn}/${textUuid}/a%5B1%5D.txt`);
    expect(encoded.headers.get('content-disposition')).toBe('attachment; filename="a[1].txt"');
    const unicode = await fetch(`${srv.cdn}/${binUuid}/`);
    expect(unicode.headers.get('content-disposition')).toContain("filename*=UTF-8''%D0%A1");
  });

  it('ignores -/@clib/ library tags', async () => {
    const r = await fetch(`${srv.cdn}/${textUuid}/-/@clib/blocks/1.2.3/uc-img/`);
    expect(r.status).toBe(200);
    expect(await r.text()).toBe('hello\n');
  });

  it('answers If-None-Match with 304', async () => {
    const first = await fetch(`${srv.cdn}/${binUuid}/`);
    const etag = first.headers.get('etag') as string;
    expect(etag).toBe(`"${crypto.createHash('md5').update(bytes).digest('hex')}"`);
    const again = await fetch(`${srv.cdn}/${binUuid}/`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect((await fetch(`${srv.cdn}/${binUuid}/`, { headers: { 'if-none-match': '"other"' } })).status).toBe(200);
  });

  it('serves ranges with 206 and refuses unsatisfiable ones with 416', async () => {
    const r = await fetch(`${srv.cdn}/${binUuid}/`, { headers: { range: 'bytes=10-19' } });
    expect(r.status).toBe(206);
    expect(r.headers.get('content-range')).toBe(`bytes 10-19/${bytes.length}`);
    expect(Buffer.from(await r.arrayBuffer())).toEqual(bytes.subarray(10, 20));
    const suffix = await fetch(`${srv.cdn}/${binUuid}/`, { headers: { range: 'bytes=-5' } });
    expect(Buffer.from(await suffix.arrayBuffer())).toEqual(bytes.subarray(bytes.length - 5));
    const open = await fetch(`${srv.cdn}/${binUuid}/`, { headers: { range: `bytes=${bytes.length - 3}-` } });
    expect(Buffer.from(await open.arrayBuffer())).toEqual(bytes.subarray(bytes.length - 3));
    const bad = await fetch(`${srv.cdn}/${binUuid}/`, { headers: { range: `bytes=${bytes.length}-` } });
    expect(bad.status).toBe(416);
    expect(bad.headers.get('content-range')).toBe(`bytes */${bytes.length}`);
  });

  it('answers HEAD with headers only', async () => {
    const r = await fetch(`${srv.cdn}/${binUuid}/`, { method: 'HEAD' });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-length')).toBe(String(bytes.length));
    expect((await r.arrayBuffer()).byteLength).toBe(0);
  });

  it('answers 404 for unknown and removed files and rejects other methods', async () => {
    expect((await fetch(`${srv.cdn}/00000000-0000-4000-8000-000000000000/`)).status).toBe(404);
    const malformed = await fetch(`${srv.cdn}/not-a-uuid/`);
    expect(malformed.status).toBe(404);
    // The same words as every other CDN not-found (the error catalogue's entry).
    expect(await malformed.text()).toContain('<p>Not found.</p>');
    const uuid = (await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'tmp.txt', data: 'tmp' }])).json.file;
    expect((await fetch(`${srv.cdn}/${uuid}/`)).status).toBe(200);
    await srv.call('DELETE', `/files/${uuid}/storage/`);
    expect((await fetch(`${srv.cdn}/${uuid}/`)).status).toBe(404);
    const post = await fetch(`${srv.cdn}/${textUuid}/`, { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD, OPTIONS']);
  });
});
