import crypto from 'node:crypto';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { uploadBase } from '../helpers/rest.js';

const srv = useServer({ env: { STOWAGE_MAX_UPLOAD_BYTES: String(1024 * 1024) } });

const info = async (uuid: string) => (await fetch(`${srv.upload}/info/?pub_key=${srv.keys.public_key}&file_id=${uuid}`)).json();

describe('POST /base/', () => {
  it('keys the response by field name, for several files in one request', async () => {
    const r = await uploadBase(srv.upload, srv.keys.public_key, [
      { field: 'sample1.txt', name: 'sample1.txt', data: 'one' },
      { field: 'sample2.txt', name: 'sample2.txt', data: 'two' },
    ]);
    expect(r.status).toBe(200);
    expect(Object.keys(r.json).sort()).toEqual(['sample1.txt', 'sample2.txt']);
    const one = await info(r.json['sample1.txt']);
    expect(one).toMatchObject({ size: 3, original_filename: 'sample1.txt', is_ready: true });
  });

  it('accepts the neutral field names and applies store 0/1/auto and metadata to every file', async () => {
    const form = new FormData();
    form.append('a', new Blob(['a']), 'a.txt');
    form.append('b', new Blob(['b']), 'b.txt');
    form.append('SVC_PUB_KEY', srv.keys.public_key);
    form.append('SVC_STORE', '0');
    form.append('metadata[subsystem]', 'tests');
    const r = await (await fetch(`${srv.upload}/base/`, { method: 'POST', body: form })).json();
    for (const uuid of Object.values(r) as string[]) {
      const f = await srv.call('GET', `/files/${uuid}/`);
      expect(f.json.datetime_stored).toBeNull();
      expect(f.json.metadata).toEqual({ subsystem: 'tests' });
    }
    const stored = await uploadBase(srv.upload, srv.keys.public_key, [{ name: 's.txt', data: 's' }], { UPLOADCARE_STORE: '1' });
    expect((await info(stored.json.file)).is_stored).toBe(true);
    // auto follows the project's autostore setting (on by default).
    const auto = await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'auto.txt', data: 'x' }], { UPLOADCARE_STORE: 'auto' });
    expect((await info(auto.json.file)).is_stored).toBe(true);
    const noAuto = await srv.server.createProject(['--autostore', 'off']);
    const r2 = await uploadBase(srv.upload, noAuto.public_key, [{ name: 'auto.txt', data: 'x' }]);
    const i2 = await (await fetch(`${srv.upload}/info/?pub_key=${noAuto.public_key}&file_id=${r2.json.file}`)).json();
    expect(i2.is_stored).toBe(false);
  });

  it('sniffs what the file is from the content (content_info.mime); mime_type stays what the client declared', async () => {
    const png = await sharp({ create: { width: 40, height: 30, channels: 4, background: '#ff000080' } }).png().toBuffer();
    const r = await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'lies.txt', data: png, type: 'text/plain' }]);
    const f = await info(r.json.file);
    expect(f.mime_type).toBe('text/plain');
    expect(f.content_info.mime).toEqual({ mime: 'image/png', type: 'image', subtype: 'png' });
    expect(f.is_image).toBe(true);
    expect(f.content_info.image).toMatchObject({ format: 'PNG', width: 40, height: 30, sequence: false, color_mode: 'RGBA', orientation: null, geo_location: null, datetime_original: null });
    const exe = await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'photo.jpg', data: Buffer.from('MZ\x90\x00' + 'x'.repeat(200), 'binary'), type: 'image/jpeg' }]);
    expect((await info(exe.json.file)).is_image).toBe(false);
  });

  it('reads EXIF orientation, date and GPS of a JPEG', async () => {
    const jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#00ff00' } })
      .jpeg()
      .withMetadata({ orientation: 6, density: 300, exif: { IFD0: { Make: 'Test' }, IFD2: { DateTimeOriginal: '2023:03:10 16:23:15' } } })
      .toBuffer();
    const r = await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'p.jpg', data: jpeg }]);
    const f = await srv.call('GET', `/files/${r.json.file}/`);
    expect(f.json.content_info.image).toMatchObject({ format: 'JPEG', width: 64, height: 48, orientation: 6, datetime_original: '2023-03-10T16:23:15', dpi: [300, 300], color_mode: 'RGB' });
    expect(f.json.is_image).toBe(true);
  });

  it('marks images above 75 Mpx as not images', async () => {
    // 9000 x 9000 = 81 Mpx; a PNG of one colour compresses to a few hundred KB.
    const big = await sharp({ create: { width: 9000, height: 9000, channels: 3, background: '#000' } }).grayscale().png({ compressionLevel: 9 }).toBuffer();
    expect(big.length).toBeLessThan(1024 * 1024);
    const r = await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'big.png', data: big }]);
    const f = await info(r.json.file);
    expect(f.is_image).toBe(false);
    expect(f.content_info.image.width).toBe(9000);
  });

  it('enforces the size cap without keeping anything', async () => {
    const r = await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'big.bin', data: crypto.randomBytes(1024 * 1024 + 1) }]);
    expect(r.status).toBe(400);
    expect(r.text).toBe('File is too large.');
    const list = await srv.call('GET', '/files/?limit=1000');
    expect(list.json.results.some((f: { size: number }) => f.size > 1024 * 1024)).toBe(false);
    const exact = await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'ok.bin', data: crypto.randomBytes(1024 * 1024) }]);
    expect(exact.status).toBe(200);
  });

  it('renders errors as text, or as 200 JSON with jsonerrors=1', async () => {
    const form = () => {
      const f = new FormData();
      f.append('file', new Blob(['x']), 'x.txt');
      return f;
    };
    const plain = await fetch(`${srv.upload}/base/`, { method: 'POST', body: form() });
    expect(plain.status).toBe(403);
    expect(plain.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await plain.text()).toBe('UPLOADCARE_PUB_KEY is required.');
    const json = await fetch(`${srv.upload}/base/?jsonerrors=1`, { method: 'POST', body: form() });
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toBe('application/json');
    expect(await json.json()).toEqual({ error: { status_code: 403, content: 'UPLOADCARE_PUB_KEY is required.', error_code: 'ProjectPublicKeyRequiredError' } });
    const f = form();
    f.append('UPLOADCARE_PUB_KEY', 'nope');
    const invalid = await fetch(`${srv.upload}/base/?jsonerrors=1`, { method: 'POST', body: f });
    expect((await invalid.json()).error).toMatchObject({ status_code: 403, content: 'UPLOADCARE_PUB_KEY is invalid.', error_code: 'ProjectPublicKeyInvalidError' });
  });

  it('rejects bad requests with 4xx: no files, bad store, bad metadata, malformed multipart', async () => {
    const noFile = new FormData();
    noFile.append('UPLOADCARE_PUB_KEY', srv.keys.public_key);
    const r1 = await fetch(`${srv.upload}/base/`, { method: 'POST', body: noFile });
    expect([r1.status, await r1.text()]).toEqual([400, 'Request does not contain files.']);
    const badStore = await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'a', data: 'a' }], { UPLOADCARE_STORE: 'maybe' });
    expect(badStore.status).toBe(400);
    const badKey = await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'a', data: 'a' }], { 'metadata[bad key]': 'v' });
    expect([badKey.status, badKey.text]).toEqual([400, "File's metadata key `bad key` contains symbols not allowed by the metadata key format."]);
    const longValue = await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'a', data: 'a' }], { 'metadata[k]': 'v'.repeat(513) });
    expect(longValue.status).toBe(400);
    const broken = await fetch(`${srv.upload}/base/`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=XYZ' },
      body: '--XYZ\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\npartial',
    });
    expect(broken.status).toBe(400);
    // Without a key the key is what is wrong (the SDK's own test), with one the missing files.
    const notMultipart = await fetch(`${srv.upload}/base/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect([notMultipart.status, await notMultipart.text()]).toEqual([403, 'UPLOADCARE_PUB_KEY is required.']);
    const keyedJson = await fetch(`${srv.upload}/base/?UPLOADCARE_PUB_KEY=${srv.keys.public_key}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect([keyedJson.status, await keyedJson.text()]).toEqual([400, 'Request does not contain files.']);
  });

  it('answers "UPLOADCARE_PUB_KEY is required." when no key is sent, before "Request does not contain files."', async () => {
    // The upload SDK's browser test: a raw POST with no body at all, jsonerrors=1 -> 200 with the error.
    const raw = await fetch(`${srv.upload}/base/?jsonerrors=1`, { method: 'POST' });
    expect(raw.status).toBe(200);
    expect(((await raw.json()) as { error: unknown }).error).toEqual({ status_code: 403, content: 'UPLOADCARE_PUB_KEY is required.', error_code: 'ProjectPublicKeyRequiredError' });
    const empty = await fetch(`${srv.upload}/base/`, { method: 'POST', body: new FormData() });
    expect([empty.status, await empty.text()]).toEqual([403, 'UPLOADCARE_PUB_KEY is required.']);
    // A file part but no key field anywhere in the body: the key is what is wrong.
    const fileOnly = new FormData();
    fileOnly.append('file', new Blob(['x']), 'x.txt');
    const noKey = await fetch(`${srv.upload}/base/`, { method: 'POST', body: fileOnly });
    expect([noKey.status, await noKey.text()]).toEqual([403, 'UPLOADCARE_PUB_KEY is required.']);
  });

  it('answers CORS preflights the way the browser SDK needs', async () => {
    const r = await fetch(`${srv.upload}/base/`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-uc-user-agent' },
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('x-uc-user-agent');
    expect(r.headers.get('access-control-allow-methods')).toContain('POST');
  });
});

describe('GET /info/', () => {
  it('returns the upload info object and the wire errors', async () => {
    const up = await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'WhatsApp Image 2023-06-26 at 8.56.32 AM.jpeg', data: 'not really' }]);
    const body = await info(up.json.file);
    expect(body).toMatchObject({ uuid: up.json.file, file_id: up.json.file, filename: 'WhatsAppImage20230626at85632AM.jpeg', original_filename: 'WhatsApp Image 2023-06-26 at 8.56.32 AM.jpeg', size: 10, total: 10, done: 10, is_ready: true, image_info: null, video_info: null, metadata: {} });
    const missing = await fetch(`${srv.upload}/info/?pub_key=${srv.keys.public_key}`);
    expect([missing.status, await missing.text()]).toEqual([400, 'file_id is required.']);
    const invalid = await fetch(`${srv.upload}/info/?pub_key=${srv.keys.public_key}&file_id=xyz`);
    expect([invalid.status, await invalid.text()]).toEqual([400, 'file_id is invalid.']);
    const unknown = await fetch(`${srv.upload}/info/?pub_key=${srv.keys.public_key}&file_id=00000000-0000-4000-8000-000000000000`);
    expect([unknown.status, await unknown.text()]).toEqual([404, 'File is not found.']);
    const noKey = await fetch(`${srv.upload}/info/?file_id=${up.json.file}`);
    expect([noKey.status, await noKey.text()]).toEqual([403, 'pub_key is required.']);
  });
});
