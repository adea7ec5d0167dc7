/** POST /files/local_copy/: bytes or processed result into a new file, store/metadata, every 400 (wire-reference §2.6). */
import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { useServer } from '../helpers/use-server.js';
import { png, randomBytes, upload } from '../groups/helpers.js';

const PROCESSED_CAP = 60_000;
const PLAIN_CAP = 400_000;
const srv = useServer({ env: { STOWAGE_COPY_PROCESSED_MAX_BYTES: String(PROCESSED_CAP), STOWAGE_COPY_MAX_BYTES: String(PLAIN_CAP) } });

const copy = (body: unknown) => srv.call('POST', '/files/local_copy/', { body: JSON.stringify(body) });
const cdnBytes = async (uuid: string) => Buffer.from(await (await fetch(`${srv.cdn}/${uuid}/`)).arrayBuffer());

describe('local copy', () => {
  it('copies the bytes into a new file: 201, Location, {type, result}', async () => {
    const data = randomBytes(200_000);
    const src = await upload(srv.server, srv.keys, 'data.bin', data);
    const r = await copy({ source: src, store: true, metadata: { origin: 'copy' } });
    expect(r.status, r.text).toBe(201);
    expect(r.json.type).toBe('file');
    const out = r.json.result;
    expect(out.uuid).not.toBe(src);
    expect(r.headers.get('location')).toBe(`${srv.rest}/files/${out.uuid}/`);
    expect(out).toMatchObject({ size: 200_000, original_filename: 'data.bin', metadata: { origin: 'copy' }, datetime_removed: null });
    expect(out.datetime_stored).not.toBeNull();
    expect((await cdnBytes(out.uuid)).equals(data)).toBe(true);
    const info = await srv.call('GET', `/files/${out.uuid}/`);
    expect(info.json).toMatchObject({ uuid: out.uuid, size: 200_000, is_ready: true });
  });

  it('honours store given as boolean or string, default false', async () => {
    const src = await upload(srv.server, srv.keys, 'a.txt', 'aaa');
    expect((await copy({ source: src, store: 'false' })).json.result.datetime_stored).toBeNull();
    expect((await copy({ source: src, store: false })).json.result.datetime_stored).toBeNull();
    expect((await copy({ source: src })).json.result.datetime_stored).toBeNull();
    expect((await copy({ source: src, store: 'true' })).json.result.datetime_stored).not.toBeNull();
  });

  it('produces the processed result for uuid/-/ops/ and CDN URL sources', async () => {
    const src = await upload(srv.server, srv.keys, 'photo.png', await png(400, 200), 'image/png');
    const a = await copy({ source: `${src}/-/resize/100x/`, store: true });
    expect(a.status, a.text).toBe(201);
    let m = await sharp(await cdnBytes(a.json.result.uuid)).metadata();
    expect([m.width, m.height, m.format]).toEqual([100, 50, 'png']);
    const b = await copy({ source: `${srv.cdn}/${src}/-/crop/40x30/-/format/jpeg/`, store: true });
    expect(b.status, b.text).toBe(201);
    m = await sharp(await cdnBytes(b.json.result.uuid)).metadata();
    expect([m.width, m.height, m.format]).toEqual([40, 30, 'jpeg']);
    expect(b.json.result.original_filename).toBe('photo.jpg');
    // A CDN URL without operations copies the original.
    const c = await copy({ source: `${srv.cdn}/${src}/photo.png` });
    m = await sharp(await cdnBytes(c.json.result.uuid)).metadata();
    expect([m.width, m.height]).toEqual([400, 200]);
  });

  it('refuses every bad request with the wire texts', async () => {
    const src = await upload(srv.server, srv.keys, 'a.txt', 'aaa');
    const removed = await upload(srv.server, srv.keys, 'r.txt', 'rrr');
    expect((await srv.call('DELETE', `/files/${removed}/storage/`)).status).toBe(200);
    const foreign = await upload(srv.server, await srv.server.createProject(), 'f.txt', 'fff');
    const img = await upload(srv.server, srv.keys, 'big.png', await sharp(randomBytes(200 * 200 * 3), { raw: { width: 200, height: 200, channels: 3 } }).png().toBuffer(), 'image/png');
    const huge = await upload(srv.server, srv.keys, 'huge.bin', randomBytes(PLAIN_CAP + 1));
    const BAD = 'Bad `source` parameter. Use UUID or CDN URL.';
    const cases: Array<[unknown, string]> = [
      [{}, '`source` parameter is required.'],
      [{ source: '' }, '`source` parameter is required.'],
      [{ source: 'junk' }, BAD],
      [{ source: 42 }, BAD],
      [{ source: removed }, BAD],
      [{ source: foreign }, BAD],
      [{ source: '00000000-0000-4000-8000-000000000000' }, BAD],
      [{ source: `${src}/-/nonsense/` }, BAD],
      [{ source: src, store: 'maybe' }, '`store` parameter should be `true` or `false`.'],
      [{ source: `${img}/-/resize/10x/` }, 'Copying of large files is not supported at the moment.'],
      [{ source: huge }, 'Copying of large files is not supported at the moment.'],
      [{ source: src, metadata: { 'bad key!': 'v' } }, "File's metadata key `bad key!` contains symbols not allowed by the metadata key format."],
    ];
    for (const [body, detail] of cases) {
      const r = await copy(body);
      expect([r.status, r.json], JSON.stringify(body)).toEqual([400, { detail }]);
    }
    // The same large image copies fine without operations (5 GB rule, here PLAIN_CAP).
    expect((await copy({ source: img })).status).toBe(201);
    expect((await srv.call('POST', '/files/local_copy/', { body: 'not json' })).status).toBe(400);
  });
});
