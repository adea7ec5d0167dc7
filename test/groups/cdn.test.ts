/** CDN group URLs: listing, nth with the group's default effects applied first, zip/tar archives (cdn-url-api.md). */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import tar from 'tar-stream';
import { unzip } from '../helpers/archives.js';
import { useServer } from '../helpers/use-server.js';
import { makeGroup, png, randomBytes, upload } from './helpers.js';

const ARCHIVE_CAP = 1_000_000;
const srv = useServer({ env: { STOWAGE_GROUP_ARCHIVE_MAX_BYTES: String(ARCHIVE_CAP) } });

async function get(path: string): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const res = await fetch(srv.cdn + path);
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

async function untar(buf: Buffer): Promise<Array<[string, Buffer]>> {
  const extract = tar.extract();
  const out: Array<[string, Buffer]> = [];
  Readable.from([buf]).pipe(extract);
  for await (const entry of extract) {
    const chunks: Buffer[] = [];
    for await (const c of entry) chunks.push(c as Buffer);
    out.push([entry.header.name, Buffer.concat(chunks)]);
  }
  return out;
}

describe('group page and nth', () => {
  it('lists each file with its nth URL and uuid', async () => {
    const a = await upload(srv.server, srv.keys, 'a.txt', 'alpha');
    const b = await upload(srv.server, srv.keys, 'b.txt', 'beta');
    const id = await makeGroup(srv.server, srv.keys, [a, b]);
    const r = await get(`/${id}/`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    const html = r.body.toString();
    expect(html).toContain(`href="${srv.cdn}/${id}/nth/0/"`);
    expect(html).toContain(`href="${srv.cdn}/${id}/nth/1/"`);
    expect(html.indexOf(a)).toBeLessThan(html.indexOf(b));
    expect((await get(`/${id}/nth/1/`)).body.toString()).toBe('beta');
    expect((await get(`/${id}/nth/0/`)).body.toString()).toBe('alpha');
    expect((await get(`/${id}/nth/2/`)).status).toBe(404);
    expect((await get(`/${id}/nth/x/`)).status).toBe(404);
    expect((await get(`/${id.replace(/~2$/, '~3')}/`)).status).toBe(404);
  });

  it('applies the default effects first, then the URL operations', async () => {
    const wide = await upload(srv.server, srv.keys, 'wide.png', await png(400, 100), 'image/png');
    const id = await makeGroup(srv.server, srv.keys, [`${wide}/-/crop/100x100/`, wide]);
    const plain = await get(`/${id}/nth/0/`);
    expect(plain.status).toBe(200);
    let m = await sharp(plain.body).metadata();
    expect([m.width, m.height]).toEqual([100, 100]);
    // crop 100x100 first, then resize to 50 wide: 50x50 (without the default crop it would be 50x13).
    const chained = await get(`/${id}/nth/0/-/resize/50x/`);
    expect(chained.status).toBe(200);
    m = await sharp(chained.body).metadata();
    expect([m.width, m.height]).toEqual([50, 50]);
    // The second member has no default effects: the URL operations alone.
    m = await sharp((await get(`/${id}/nth/1/-/resize/50x/`)).body).metadata();
    expect([m.width, m.height]).toEqual([50, 13]);
    const original = await get(`/${id}/nth/1/`);
    m = await sharp(original.body).metadata();
    expect([m.width, m.height]).toEqual([400, 100]);
    expect((await get(`/${id}/nth/1/-/nonsense/`)).status).toBe(400);
  });

  it('ignores empty path segments, as the public CDN does', async () => {
    const wide = await upload(srv.server, srv.keys, 'wide.png', await png(400, 100), 'image/png');
    const id = await makeGroup(srv.server, srv.keys, [`${wide}/-/crop/100x100/`]);
    const clean = await get(`/${id}/nth/0/-/resize/50x/`);
    expect(clean.status).toBe(200);
    const doubled = await get(`/${id}//nth//0//-/resize//50x//`);
    expect(doubled.status).toBe(200);
    expect(doubled.headers.get('etag')).toBe(clean.headers.get('etag'));
    const m = await sharp(doubled.body).metadata();
    expect([m.width, m.height]).toEqual([50, 50]);
    expect((await get(`/${id}//`)).status).toBe(200);
  });
});

describe('archives', () => {
  it('zip and tar hold the original files byte for byte, under unique names', async () => {
    const bin = randomBytes(300_000);
    const img = await png(64, 32);
    const files = [
      { name: 'data.bin', data: bin },
      { name: 'note.txt', data: Buffer.from('a note\n') },
      { name: 'note.txt', data: Buffer.from('another note with the same name\n') },
      { name: 'pic.png', data: img },
    ];
    const uuids: string[] = [];
    for (const f of files) uuids.push(await upload(srv.server, srv.keys, f.name, f.data));
    // Operations in the group are discarded in archives: originals only.
    const id = await makeGroup(srv.server, srv.keys, [uuids[0]!, uuids[1]!, uuids[2]!, `${uuids[3]}/-/resize/10x/`]);
    const zip = await get(`/${id}/archive/zip/`);
    expect(zip.status).toBe(200);
    expect(zip.headers.get('content-type')).toBe('application/zip');
    expect(zip.headers.get('content-disposition')).toMatch(/^attachment; filename=".+\.zip"$/);
    const zipped = await unzip(zip.body);
    expect(zipped.map((e) => e[0])).toEqual(['data.bin', 'note.txt', 'note (1).txt', 'pic.png']);
    zipped.forEach(([, data], i) => expect(data.equals(files[i]!.data)).toBe(true));

    const t = await get(`/${id}/archive/tar/my-files.tar`);
    expect(t.status).toBe(200);
    expect(t.headers.get('content-type')).toBe('application/x-tar');
    expect(t.headers.get('content-disposition')).toBe('attachment; filename="my-files.tar"');
    const untarred = await untar(t.body);
    expect(untarred.map((e) => e[0])).toEqual(['data.bin', 'note.txt', 'note (1).txt', 'pic.png']);
    untarred.forEach(([, data], i) => expect(data.equals(files[i]!.data)).toBe(true));

    expect((await get(`/${id}/archive/rar/`)).status).toBe(404);
  });

  it('answers 404 once a file of the group is removed', async () => {
    const a = await upload(srv.server, srv.keys, 'a.txt', 'a');
    const b = await upload(srv.server, srv.keys, 'b.txt', 'b');
    const id = await makeGroup(srv.server, srv.keys, [a, b]);
    expect((await get(`/${id}/archive/zip/`)).status).toBe(200);
    expect((await srv.call('DELETE', `/files/${b}/storage/`)).status).toBe(200);
    expect((await get(`/${id}/archive/zip/`)).status).toBe(404);
    expect((await get(`/${id}/archive/tar/`)).status).toBe(404);
    expect((await get(`/${id}/nth/1/`)).status).toBe(404);
    expect((await get(`/${id}/nth/0/`)).status).toBe(200);
  });

  it('refuses an archive above the uncompressed cap with 400', async () => {
    const big = await upload(srv.server, srv.keys, 'big.bin', randomBytes(ARCHIVE_CAP / 2 + 1));
    const under = await makeGroup(srv.server, srv.keys, [big]);
    expect((await get(`/${under}/archive/zip/`)).status).toBe(200);
    const over = await makeGroup(srv.server, srv.keys, [big, big]);
    expect((await get(`/${over}/archive/zip/`)).status).toBe(400);
    expect((await get(`/${over}/archive/tar/`)).status).toBe(400);
  });
});
