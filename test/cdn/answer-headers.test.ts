/**
 * The exact headers of the CDN's two hot answers, a cached transform and a raw file from memory, as
 * they go on the wire (every name, every value, each once), and that one answer's headers never
 * reach the next: a range, a 304, a HEAD, another filename or another request id in between leave
 * the following full answer exactly as the first.
 */
import http from 'node:http';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { uploadBase } from '../helpers/rest.js';
import { useServer } from '../helpers/use-server.js';

const srv = useServer();
let imageUuid: string;
let textUuid: string;
/** Each file's Last-Modified (its upload time, to the second): the two uploads may fall in different seconds. */
let imageUploadedAt: string;
let textUploadedAt: string;

/** Status and the raw header lines (name lower-cased, in wire order, repeats kept) of one request on a fresh connection. */
function raw(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; headers: Array<[string, string]>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${srv.cdn}${path}`, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const list: Array<[string, string]> = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) list.push([(res.rawHeaders[i] as string).toLowerCase(), res.rawHeaders[i + 1] as string]);
        resolve({ status: res.statusCode ?? 0, headers: list, body: Buffer.concat(chunks) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** The header lines with the per-answer values (date, request id) checked and replaced by placeholders. */
function normalized(headers: Array<[string, string]>, requestId?: string): Array<[string, string]> {
  return headers.map(([name, value]) => {
    if (name === 'date') {
      expect(value).toMatch(/GMT$/);
      return [name, '<date>'];
    }
    if (name === 'x-request-id') {
      if (requestId) expect(value).toBe(requestId);
      else expect(value).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
      return [name, '<id>'];
    }
    return [name, value];
  });
}

const sorted = (list: Array<[string, string]>) => [...list].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));

beforeAll(async () => {
  const jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#336699' } }).jpeg().toBuffer();
  imageUuid = (await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'photo.jpg', data: jpeg }], { UPLOADCARE_STORE: '1' })).json.file;
  textUuid = (await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'notes.txt', data: 'hello\n', type: 'text/plain' }], { UPLOADCARE_STORE: '1' })).json.file;
  const lastModifiedOf = async (uuid: string) => (await raw(`/${uuid}/`)).headers.find(([n]) => n === 'last-modified')?.[1] as string;
  imageUploadedAt = await lastModifiedOf(imageUuid);
  textUploadedAt = await lastModifiedOf(textUuid);
});

describe('CDN answer headers', () => {
  it('a cached transform hit answers exactly these headers, each once', async () => {
    const path = `/${imageUuid}/-/resize/32x/`;
    const first = await raw(path);
    expect(first.status).toBe(200);
    const hit = await raw(path);
    expect(hit.status).toBe(200);
    const etag = hit.headers.find(([n]) => n === 'etag')?.[1] as string;
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(sorted(normalized(hit.headers))).toEqual(
      sorted([
        ['content-type', 'image/jpeg'],
        ['etag', etag],
        ['cache-control', 'public, max-age=31536000, immutable'],
        ['last-modified', imageUploadedAt],
        ['access-control-allow-origin', '*'],
        ['access-control-expose-headers', 'Content-Length, Etag, X-Image-Width, X-Image-Height, X-Image-Acceptable-Original, X-Image-Acceptable-Improved, X-Stowage-Cache'],
        ['x-content-type-options', 'nosniff'],
        ['x-stowage-cache', 'hit'],
        ['x-image-width', '32'],
        ['x-image-height', '24'],
        ['accept-ranges', 'bytes'],
        ['content-disposition', 'inline; filename="photo.jpg"'],
        ['content-length', String(hit.body.length)],
        ['x-request-id', '<id>'],
        ['date', '<date>'],
        ['connection', 'close'],
      ]),
    );
    // The first answer rendered it; otherwise the same headers.
    expect(normalized(first.headers).map(([n, v]) => (n === 'x-stowage-cache' ? [n, 'hit'] : [n, v]))).toEqual(normalized(hit.headers));
  });

  it('a raw answer from memory answers exactly these headers, each once', async () => {
    const r = await raw(`/${textUuid}/`);
    expect([r.status, r.body.toString()]).toEqual([200, 'hello\n']);
    expect(sorted(normalized(r.headers))).toEqual(
      sorted([
        ['content-type', 'text/plain'],
        ['content-disposition', 'attachment; filename="notes.txt"'],
        ['etag', '"b1946ac92492d2347c6235b4d2611184"'],
        ['last-modified', textUploadedAt],
        ['cache-control', 'public, max-age=31536000, immutable'],
        ['accept-ranges', 'bytes'],
        ['access-control-allow-origin', '*'],
        ['x-content-type-options', 'nosniff'],
        ['content-length', '6'],
        ['x-request-id', '<id>'],
        ['date', '<date>'],
        ['connection', 'close'],
      ]),
    );
  });

  for (const [kind, path] of [
    ['cached transform', () => `/${imageUuid}/-/resize/32x/`],
    ['raw', () => `/${textUuid}/`],
  ] as const) {
    it(`a ${kind} answer carries nothing of the answers before it`, async () => {
      const full = async () => normalized((await raw(path())).headers);
      await raw(path());
      const reference = await full();
      const etag = reference.find(([n]) => n === 'etag')?.[1] as string;

      const part = await raw(path(), { range: 'bytes=1-3' });
      expect(part.status).toBe(206);
      expect(part.body.length).toBe(3);
      expect(part.headers.filter(([n]) => n === 'content-range')).toHaveLength(1);
      expect(await full()).toEqual(reference);

      const same = await raw(path(), { 'if-none-match': etag });
      expect(same.status).toBe(304);
      expect(await full()).toEqual(reference);

      const head = await raw(path(), {}, 'HEAD');
      expect(head.status).toBe(200);
      expect(normalized(head.headers)).toEqual(reference);
      expect(await full()).toEqual(reference);

      const named = await raw(`${path()}other-name.bin`);
      expect(named.headers.find(([n]) => n === 'content-disposition')?.[1]).toMatch(/filename="other-name\.bin"/);
      expect(await full()).toEqual(reference);

      const traced = await raw(path(), { 'x-request-id': 'trace-7.a' });
      expect(normalized(traced.headers, 'trace-7.a')).toEqual(reference);
      const ids = new Set<string>();
      for (let i = 0; i < 3; i++) {
        const r = await raw(path());
        expect(r.headers.filter(([n]) => n === 'x-request-id')).toHaveLength(1);
        ids.add(r.headers.find(([n]) => n === 'x-request-id')?.[1] as string);
      }
      expect(ids.size).toBe(3);
      expect(await full()).toEqual(reference);
    });
  }
});
