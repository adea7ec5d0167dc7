/**
 * REST API v0.6 (spec "Versioning"): selected by `Accept`, the v0.6 file object, `add_fields`,
 * `ordering=size`, `DELETE /files/{uuid}/` and group storing; v0.7 requests keep the v0.7 shapes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { makeGroup, png } from '../groups/helpers.js';

const V06 = 'application/vnd.uploadcare-v0.6+json';
const srv = useServer();
const v06 = (method: string, path: string, body?: string) => srv.call(method, path, { accept: V06, ...(body === undefined ? {} : { body }) });

const V06_KEYS = [
  'datetime_removed', 'datetime_stored', 'datetime_uploaded', 'image_info', 'is_image', 'is_ready', 'mime_type', 'original_file_url',
  'original_filename', 'size', 'url', 'uuid', 'variations', 'video_info', 'source',
];

describe('version selection', () => {
  it('answers v0.6 for the SDK media type and for the neutral one, 0.7 shapes otherwise', async () => {
    const uuid = await srv.uploadFile('v.txt', 'version');
    for (const accept of [V06, 'application/vnd.svc-v0.6+json', `text/html, ${V06};q=0.9`]) {
      const r = await srv.call('GET', `/files/${uuid}/`, { accept });
      expect(r.status, accept).toBe(200);
      expect(r.headers.get('content-type')).toBe('application/json');
      expect(Object.keys(r.json)).toEqual(V06_KEYS);
    }
    const current = await srv.call('GET', `/files/${uuid}/`);
    expect(current.json).toHaveProperty('content_info');
    expect(current.json).not.toHaveProperty('image_info');
  });
});

describe('the v0.6 file object', () => {
  let image: string;
  beforeAll(async () => {
    image = await srv.uploadFile('red.png', await png(40, 30), { type: 'image/png' });
  });

  it('carries image_info (the v0.7 content_info.image) and no content_info, appdata, metadata or tags', async () => {
    const old = await v06('GET', `/files/${image}/`);
    const cur = await srv.call('GET', `/files/${image}/`);
    expect(old.status).toBe(200);
    expect(old.json.image_info).toEqual(cur.json.content_info.image);
    expect(old.json.image_info).toMatchObject({ width: 40, height: 30, format: 'PNG' });
    expect(old.json).toMatchObject({ video_info: null, source: null, is_image: true, uuid: image, size: cur.json.size });
    for (const gone of ['content_info', 'appdata', 'metadata', 'tags', 'rekognition_info']) expect(old.json).not.toHaveProperty(gone);
  });

  it('adds rekognition_info with add_fields=rekognition_info (null before the labels add-on ran), never appdata', async () => {
    const r = await v06('GET', `/files/${image}/?add_fields=rekognition_info`);
    expect(r.status).toBe(200);
    expect(r.json.rekognition_info).toBeNull();
    const list = await v06('GET', '/files/?add_fields=rekognition_info&limit=1000');
    expect(list.json.results.find((f: { uuid: string }) => f.uuid === image).rekognition_info).toBeNull();
    // include is the v0.7 word: ignored by v0.6 like any unknown parameter.
    expect((await v06('GET', `/files/${image}/?include=appdata`)).json).not.toHaveProperty('appdata');
    expect((await v06('GET', `/files/${image}/?add_fields=appdata`)).status).toBe(400);
    expect((await srv.call('GET', `/files/${image}/?include=rekognition_info`)).status).toBe(400);
  });
});

describe('file list ordering by size (v0.6)', () => {
  let call: Awaited<ReturnType<typeof srv.newProject>>['call'];
  const sizes = [5, 3, 9, 3, 1, 7, 3, 12];
  const uploaded: Array<{ uuid: string; size: number }> = [];
  beforeAll(async () => {
    const p = await srv.newProject();
    call = p.call;
    for (const [i, n] of sizes.entries()) {
      const form = new FormData();
      form.append('file', new Blob(['x'.repeat(n)]), `f${i}.txt`);
      form.append('UPLOADCARE_PUB_KEY', p.keys.public_key);
      form.append('UPLOADCARE_STORE', '1');
      const r = await fetch(`${srv.upload}/base/`, { method: 'POST', body: form });
      uploaded.push({ uuid: ((await r.json()) as { file: string }).file, size: n });
    }
  });

  /** Follows `next` from the first page; answers every uuid in page order. */
  async function walk(first: string): Promise<string[]> {
    const seen: string[] = [];
    let url: string | null = first;
    while (url) {
      const r = await call('GET', url.replace(srv.rest, ''), { accept: V06 });
      expect(r.status, r.text).toBe(200);
      seen.push(...r.json.results.map((f: { uuid: string }) => f.uuid));
      url = r.json.next;
    }
    return seen;
  }

  // Expected order: by size, ties by upload time (the order of `uploaded`).
  const bySize = (desc: boolean) =>
    [...uploaded.entries()].sort(([i, a], [j, b]) => (desc ? b.size - a.size || j - i : a.size - b.size || i - j)).map(([, f]) => f.uuid);

  it('walks size, then -size, in pages of 2 across ties, each file once', async () => {
    expect(await walk(`${srv.rest}/files/?ordering=size&limit=2`)).toEqual(bySize(false));
    expect(await walk(`${srv.rest}/files/?ordering=-size&limit=2`)).toEqual(bySize(true));
  });

  it('takes `from` as a size in bytes (inclusive), and previous links walk back exactly', async () => {
    const r = await call('GET', '/files/?ordering=size&from=3&limit=2', { accept: V06 });
    expect(r.json.results.map((f: { size: number }) => f.size)).toEqual([3, 3]);
    expect(r.json.total).toBe(sizes.length);
    const down = await call('GET', '/files/?ordering=-size&from=7&limit=3', { accept: V06 });
    expect(down.json.results.map((f: { size: number }) => f.size)).toEqual([7, 5, 3]);
    // Third page back to the second: the same files as the second page.
    const p1 = await call('GET', '/files/?ordering=size&limit=3', { accept: V06 });
    const p2 = await call('GET', p1.json.next.replace(srv.rest, ''), { accept: V06 });
    const p3 = await call('GET', p2.json.next.replace(srv.rest, ''), { accept: V06 });
    const back = await call('GET', p3.json.previous.replace(srv.rest, ''), { accept: V06 });
    expect(back.json.results.map((f: { uuid: string }) => f.uuid)).toEqual(p2.json.results.map((f: { uuid: string }) => f.uuid));
    expect(p1.json.previous).toBeNull();
  });

  it('refuses a non-size `from` under size ordering, and size ordering in v0.7', async () => {
    expect((await call('GET', '/files/?ordering=size&from=2024-01-01T00:00:00Z', { accept: V06 })).status).toBe(400);
    const v07 = await call('GET', '/files/?ordering=-size');
    expect(v07.status).toBe(400);
    expect(v07.json.detail).toContain('datetime_uploaded');
    expect((await call('GET', '/files/?ordering=-datetime_uploaded&limit=1', { accept: V06 })).json.results[0].uuid).toBe(uploaded[uploaded.length - 1]!.uuid);
  });
});

describe('DELETE /files/{uuid}/', () => {
  it('removes the file in v0.6 and is not a v0.7 route', async () => {
    const uuid = await srv.uploadFile('d.txt', 'delete me');
    const v07 = await srv.call('DELETE', `/files/${uuid}/`);
    expect(v07.status).toBe(404);
    expect((await srv.call('GET', `/files/${uuid}/`)).json.datetime_removed).toBeNull();
    const r = await v06('DELETE', `/files/${uuid}/`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.json)).toEqual([...V06_KEYS, 'rekognition_info']);
    expect(r.json.datetime_removed).toMatch(/Z$/);
    expect((await srv.call('GET', `/files/${uuid}/`)).json.datetime_removed).toMatch(/Z$/);
    expect((await v06('DELETE', '/files/00000000-0000-4000-8000-000000000000/')).status).toBe(404);
  });
});

describe('PUT /groups/{id}/storage/', () => {
  it('stores every file of the group in v0.6 and answers the group in v0.6 shapes; 404 in v0.7', async () => {
    const a = await srv.uploadFile('a.txt', 'aaa', { store: false });
    const b = await srv.uploadFile('b.png', await png(8, 8), { store: false, type: 'image/png' });
    const id = await makeGroup(srv.server, srv.keys, [a, `${b}/-/resize/4x/`]);
    expect((await srv.call('PUT', `/groups/${id}/storage/`)).status).toBe(404);
    expect((await srv.call('GET', `/files/${a}/`)).json.datetime_stored).toBeNull();
    const before = await v06('GET', `/groups/${id}/`);
    expect(before.json.datetime_stored).toBeNull();

    const r = await v06('PUT', `/groups/${id}/storage/`);
    expect(r.status, r.text).toBe(200);
    expect(r.json.id).toBe(id);
    expect(r.json.datetime_stored).toMatch(/Z$/);
    expect(r.json.files.map((f: { uuid: string }) => f.uuid)).toEqual([a, b]);
    expect(r.json.files[1]).toMatchObject({ default_effects: 'resize/4x/', image_info: { width: 8, height: 8 } });
    expect(r.json.files[1]).not.toHaveProperty('content_info');
    for (const u of [a, b]) expect((await srv.call('GET', `/files/${u}/`)).json.datetime_stored).toMatch(/Z$/);
    // v0.7 keeps the deprecated field null and its own file shape.
    const cur = await srv.call('GET', `/groups/${id}/`);
    expect(cur.json.datetime_stored).toBeNull();
    expect(cur.json.files[1]).toHaveProperty('content_info');
    expect((await v06('PUT', '/groups/00000000-0000-4000-8000-000000000000~2/storage/')).status).toBe(404);
  });
});
