/** Malformed input on every surface gets a 4xx, never a 5xx, and the server keeps serving. */
import net from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { uploadBase } from '../helpers/rest.js';

const srv = useServer();
let uuid: string;

beforeAll(async () => {
  uuid = (await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'a.txt', data: 'a' }])).json.file;
});

function rawRequest(base: string, text: string): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname, () => socket.end(text));
    let out = '';
    socket.on('data', (d) => (out += d.toString('latin1')));
    socket.on('close', () => resolve(out));
    socket.on('error', () => resolve(out));
  });
}

describe('hostile input', () => {
  it('REST: bad bodies, ids, keys and parameters are 4xx', async () => {
    const cases: Array<[string, string, string | undefined]> = [
      ['PUT', `/files/${uuid}/metadata/k/`, '{"unterminated'],
      ['PUT', `/files/${uuid}/metadata/k/`, '"\u0000"'],
      ['PUT', `/files/${uuid}/metadata/${'k'.repeat(5000)}/`, '"v"'],
      ['PUT', '/files/storage/', JSON.stringify([{ nested: true }])],
      ['DELETE', '/files/storage/', 'null'],
      ['GET', '/files/%ZZ/', undefined],
      ['GET', `/files/?from=${encodeURIComponent('2024-13-45T99:99:99Z')}`, undefined],
      ['GET', '/files/?limit=99999999999999999999', undefined],
      ['GET', `/files/${uuid}/metadata/%F0%9F%92%A9/`, undefined],
      ['POST', '/files/', '{}'],
    ];
    for (const [method, path, body] of cases) {
      const r = await srv.call(method, path, body === undefined ? {} : { body });
      expect(r.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
      expect(r.status, `${method} ${path}`).toBeLessThan(500);
    }
  });

  it('a metadata key named __proto__ is an ordinary key: stored, read back and answered in the file info', async () => {
    // The key syntax ([\\w.:-]{1,64}) admits it; the test servers check every answer against its
    // schema (STOWAGE_CHECK_RESPONSES), whose parsed copy can never hold an own __proto__ key.
    expect((await srv.call('PUT', `/files/${uuid}/metadata/__proto__/`, { body: '"polluted?"' })).status).toBe(201);
    const one = await srv.call('GET', `/files/${uuid}/metadata/__proto__/`);
    expect([one.status, one.json]).toEqual([200, 'polluted?']);
    const info = await srv.call('GET', `/files/${uuid}/`);
    expect(info.status).toBe(200);
    const metadata = info.json.metadata as Record<string, unknown>;
    expect(Object.hasOwn(metadata, '__proto__')).toBe(true);
    expect(metadata.__proto__).toBe('polluted?');
    expect((await srv.call('DELETE', `/files/${uuid}/metadata/__proto__/`)).status).toBe(204);
  });

  it('Upload API: hostile multipart and parameters are 4xx', async () => {
    const bodies: Array<[string, string | Buffer]> = [
      ['multipart/form-data', 'no boundary at all'],
      ['multipart/form-data; boundary=a', '--a\r\n\r\n--a--'],
      ['multipart/form-data; boundary=a', '--a\r\nContent-Disposition: form-data; name="metadata[\u0000]"\r\n\r\nx\r\n--a--\r\n'],
      ['multipart/form-data; boundary=a', Buffer.alloc(70_000, 0x41)],
      // Longer than busboy's boundary search allows (it throws while constructing the parser).
      [`multipart/form-data; boundary=${'b'.repeat(300)}`, `--${'b'.repeat(300)}\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nx\r\n--${'b'.repeat(300)}--\r\n`],
      ['text/plain', 'hello'],
    ];
    for (const [type, body] of bodies) {
      const r = await fetch(`${srv.upload}/base/?jsonerrors=0`, { method: 'POST', headers: { 'content-type': type }, body });
      expect(r.status, type).toBeGreaterThanOrEqual(400);
      expect(r.status, type).toBeLessThan(500);
    }
    // A field part without a name once reached the NUL check as `undefined` (500).
    const nameless = await fetch(`${srv.upload}/base/`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=a' },
      body: `--a\r\nContent-Disposition: form-data; name="UPLOADCARE_PUB_KEY"\r\n\r\n${srv.keys.public_key}\r\n--a\r\nContent-Disposition: form-data\r\n\r\nno name\r\n--a\r\nContent-Disposition: form-data; name="file"; filename="n.txt"\r\n\r\nn\r\n--a--\r\n`,
    });
    expect(nameless.status, await nameless.text()).toBe(200);
    const nul = await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'a', data: 'a' }], { 'metadata[k]': 'a\u0000b' });
    expect(nul.status).toBe(400);
    const manyFiles = await uploadBase(srv.upload, srv.keys.public_key, Array.from({ length: 101 }, (_, i) => ({ field: `f${i}`, name: 'x', data: 'x' })));
    expect(manyFiles.status).toBe(400);
    const info = await fetch(`${srv.upload}/info/?pub_key=${srv.keys.public_key}&file_id=%00`);
    expect(info.status).toBe(400);
  });

  it('CDN: odd paths and headers are 4xx, never 5xx', async () => {
    const paths = [
      `/${uuid}/-/`,
      `/${uuid}/-//`,
      `/${uuid}/x/y/`,
      `/${uuid}/%E0%A4%A/`,
      `/${uuid}/-/resize/99999999999999999999x/`,
      `/${uuid}/-/nope/`,
      `/${uuid}~1/`,
      `/${'a'.repeat(3000)}/`,
      '/../../etc/passwd',
    ];
    for (const p of paths) {
      const r = await fetch(srv.cdn + p);
      expect(r.status, p).toBeGreaterThanOrEqual(400);
      expect(r.status, p).toBeLessThan(500);
    }
    for (const range of ['bytes=5-1', 'bytes=-0', 'bytes=a-b', 'items=0-1', 'bytes=0-0,1-1']) {
      const r = await fetch(`${srv.cdn}/${uuid}/`, { headers: { range } });
      expect(r.status, range).toBeLessThan(500);
    }
    // An encoded path in the filename is only a download name, stripped of separators.
    const traversal = await fetch(`${srv.cdn}/${uuid}/..%2F..%2Fetc%2Fpasswd`);
    expect(traversal.status).toBe(200);
    expect(await traversal.text()).toBe('a');
    expect(traversal.headers.get('content-disposition')).not.toContain('/');
    const garbage = await rawRequest(srv.cdn, 'GET /\u0001\u0002 HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(garbage).toMatch(/^HTTP\/1\.1 4\d\d/);
  });

  it('still serves normally afterwards', async () => {
    expect((await fetch(`${srv.cdn}/${uuid}/`)).status).toBe(200);
    expect((await srv.call('GET', '/files/')).status).toBe(200);
  });
});
