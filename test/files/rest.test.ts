import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { restClient, uploadBase } from '../helpers/rest.js';

const srv = useServer();

async function upload(name: string, data: string, fields: Record<string, string> = {}): Promise<string> {
  const r = await uploadBase(srv.upload, srv.keys.public_key, [{ name, data }], { UPLOADCARE_STORE: '0', ...fields });
  expect(r.status).toBe(200);
  return r.json.file as string;
}

describe('GET /files/{uuid}/ and the v0.7 file object', () => {
  it('has every field of the spec table', async () => {
    const uuid = await upload('Hello World (1).txt', 'hello\n', { 'metadata[kind]': 'greeting' });
    const r = await srv.call('GET', `/files/${uuid}/`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.json).sort()).toEqual(
      ['content_info', 'datetime_removed', 'datetime_stored', 'datetime_uploaded', 'is_image', 'is_ready', 'metadata', 'mime_type', 'original_file_url', 'original_filename', 'size', 'tags', 'url', 'uuid', 'variations'].sort(),
    );
    expect(r.json).toMatchObject({
      uuid,
      datetime_removed: null,
      datetime_stored: null,
      is_image: false,
      is_ready: true,
      mime_type: 'text/plain',
      original_filename: 'Hello World (1).txt',
      size: 6,
      variations: null,
      metadata: { kind: 'greeting' },
      url: `${srv.rest}/files/${uuid}/`,
      original_file_url: `${srv.cdn}/${uuid}/HelloWorld1.txt`,
      content_info: { mime: { mime: 'text/plain', type: 'text', subtype: 'plain' } },
    });
    expect(r.json.datetime_uploaded).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    const withAppdata = await srv.call('GET', `/files/${uuid}/?include=appdata`);
    expect(withAppdata.json.appdata).toEqual({});
  });

  it('answers 404 for unknown and malformed ids, and for files of another project', async () => {
    expect((await srv.call('GET', '/files/00000000-0000-4000-8000-000000000000/')).json).toEqual({ detail: 'Not found.' });
    expect((await srv.call('GET', '/files/not-a-uuid/')).status).toBe(404);
    const other = await srv.server.createProject();
    const foreign = (await uploadBase(srv.upload, other.public_key, [{ name: 'x.txt', data: 'x' }])).json.file;
    expect((await srv.call('GET', `/files/${foreign}/`)).status).toBe(404);
  });

  it('rejects bad include values', async () => {
    const uuid = await upload('a.txt', 'a');
    expect((await srv.call('GET', `/files/${uuid}/?include=nope`)).status).toBe(400);
  });
});

describe('store and delete', () => {
  it('stores, then removes; removed files keep their row', async () => {
    const uuid = await upload('s.txt', 'store me');
    const stored = await srv.call('PUT', `/files/${uuid}/storage/`);
    expect(stored.status).toBe(200);
    expect(stored.json.datetime_stored).toMatch(/Z$/);
    const again = await srv.call('PUT', `/files/${uuid}/storage/`);
    expect(again.json.datetime_stored).toBe(stored.json.datetime_stored);
    const removed = await srv.call('DELETE', `/files/${uuid}/storage/`);
    expect(removed.status).toBe(200);
    expect(removed.json.datetime_removed).toMatch(/Z$/);
    expect(removed.json.datetime_stored).toBeNull();
    expect(removed.json.original_file_url).toBeNull();
    const info = await srv.call('GET', `/files/${uuid}/`);
    expect(info.json.datetime_removed).toBe(removed.json.datetime_removed);
    // With the restore window off (test servers run with STOWAGE_RESTORE_WINDOW_MS=0; restore.test.ts
    // has one), storing a removed file is refused with a clear 4xx: its bytes are being reclaimed.
    // The batch form says so per id.
    const storeRemoved = await srv.call('PUT', `/files/${uuid}/storage/`);
    expect(storeRemoved.status).toBe(400);
    expect(storeRemoved.json.detail).toBe('File is removed and can not be stored.');
    const batch = await srv.call('PUT', '/files/storage/', { body: JSON.stringify([uuid]) });
    expect(batch.json).toEqual({ status: 'ok', problems: { [uuid]: 'File is removed' }, result: [] });
    expect((await srv.call('GET', `/files/${uuid}/`)).json).toMatchObject({ datetime_removed: removed.json.datetime_removed, datetime_stored: null });
    // The CDN no longer serves it.
    expect((await fetch(`${srv.cdn}/${uuid}/`)).status).toBe(404);
  });

  it('batch store and batch delete report problems per id', async () => {
    const a = await upload('a.txt', 'a');
    const b = await upload('b.txt', 'b');
    const unknown = '00000000-0000-4000-8000-000000000001';
    const r = await srv.call('PUT', '/files/storage/', { body: JSON.stringify([a, b, unknown, 'garbage']) });
    expect(r.status).toBe(200);
    expect(r.json.status).toBe('ok');
    expect(r.json.problems).toEqual({ [unknown]: 'Missing in the project', garbage: 'Invalid' });
    expect(r.json.result.map((f: { uuid: string }) => f.uuid).sort()).toEqual([a, b].sort());
    expect(r.json.result.every((f: { datetime_stored: string | null }) => f.datetime_stored !== null)).toBe(true);
    const d = await srv.call('DELETE', '/files/storage/', { body: JSON.stringify([a, unknown]) });
    expect(d.json.problems).toEqual({ [unknown]: 'Missing in the project' });
    expect(d.json.result[0].datetime_removed).not.toBeNull();
  });

  it('validates batch bodies', async () => {
    const expectDetail = async (body: string, detail: string) => {
      const r = await srv.call('PUT', '/files/storage/', { body });
      expect(r.status).toBe(400);
      expect(r.json.detail).toBe(detail);
    };
    await expectDetail('{}', 'Expected list of UUIDs');
    await expectDetail('[1,2]', 'Expected list of UUIDs');
    await expectDetail('[]', 'List of UUIDs can not be empty');
    await expectDetail(JSON.stringify(Array.from({ length: 101 }, () => '00000000-0000-4000-8000-000000000000')), 'Maximum UUIDs per request is exceeded. The limit is 100');
    await expectDetail('not json', 'Request body is not valid JSON.');
  });
});

describe('metadata', () => {
  it('creates, reads, updates and deletes keys', async () => {
    const uuid = await upload('m.txt', 'm');
    const put = await srv.call('PUT', `/files/${uuid}/metadata/-:45az_/`, { body: JSON.stringify('value 1') });
    expect(put.status).toBe(201);
    expect(put.json).toBe('value 1');
    const update = await srv.call('PUT', `/files/${uuid}/metadata/-:45az_/`, { body: JSON.stringify('value 2') });
    expect(update.status).toBe(200);
    expect((await srv.call('GET', `/files/${uuid}/metadata/-:45az_/`)).json).toBe('value 2');
    expect((await srv.call('GET', `/files/${uuid}/metadata/`)).json).toEqual({ '-:45az_': 'value 2' });
    expect((await srv.call('DELETE', `/files/${uuid}/metadata/-:45az_/`)).status).toBe(204);
    expect((await srv.call('GET', `/files/${uuid}/metadata/-:45az_/`)).status).toBe(404);
    expect((await srv.call('GET', `/files/${uuid}/metadata/`)).json).toEqual({});
  });

  it('enforces key charset and length, value length and the 50 key limit', async () => {
    const uuid = await upload('limits.txt', 'x');
    const put = (key: string, value: unknown) => srv.call('PUT', `/files/${uuid}/metadata/${encodeURIComponent(key)}/`, { body: JSON.stringify(value) });
    expect((await put('k'.repeat(64), 'ok')).status).toBe(201);
    expect((await put('k'.repeat(65), 'ok')).status).toBe(400);
    expect((await put('bad key', 'ok')).status).toBe(400);
    expect((await put('ключ', 'ok')).status).toBe(400);
    expect((await put('v', '')).status).toBe(400);
    expect((await put('v', 'x'.repeat(512))).status).toBe(201);
    expect((await put('v', 'x'.repeat(513))).status).toBe(400);
    expect((await put('v2', 42)).status).toBe(400);
    for (let i = 3; i <= 50; i++) expect((await put(`key${i}`, 'v')).status).toBe(201);
    const over = await put('one-too-many', 'v');
    expect(over.status).toBe(400);
    expect(over.json.detail).toBe('A file can not have more than 50 metadata keys.');
    expect(Object.keys((await srv.call('GET', `/files/${uuid}/metadata/`)).json)).toHaveLength(50);
  });

  it('refuses metadata changes on a removed file', async () => {
    const uuid = await upload('gone.txt', 'x');
    await srv.call('DELETE', `/files/${uuid}/storage/`);
    const r = await srv.call('PUT', `/files/${uuid}/metadata/k/`, { body: JSON.stringify('v') });
    expect(r.status).toBe(400);
    expect(r.json.detail).toMatch(/removed/);
  });
});

describe('GET /files/ parameters', () => {
  it('filters by stored and removed, reports total and totals, validates parameters', async () => {
    const project = await srv.server.createProject();
    const c = restClient(srv.rest, project);
    const up = async (store: string) => (await uploadBase(srv.upload, project.public_key, [{ name: 'f.txt', data: 'f' }], { UPLOADCARE_STORE: store })).json.file as string;
    await up('1');
    await up('1');
    await up('0');
    const gone = await up('0');
    await c('DELETE', `/files/${gone}/storage/`);
    const all = await c('GET', '/files/');
    expect(Object.keys(all.json)).toEqual(['next', 'previous', 'total', 'totals', 'per_page', 'results']);
    expect(all.json.total).toBe(3);
    expect(all.json.totals).toEqual({ removed: 1, stored: 2, unstored: 1 });
    expect(all.json.per_page).toBe(100);
    expect(all.json.next).toBeNull();
    expect(all.json.previous).toBeNull();
    expect((await c('GET', '/files/?stored=true')).json.total).toBe(2);
    expect((await c('GET', '/files/?stored=false')).json.results).toHaveLength(1);
    const removed = await c('GET', '/files/?removed=true');
    expect(removed.json.results.map((f: { uuid: string }) => f.uuid)).toEqual([gone]);
    const desc = await c('GET', '/files/?ordering=-datetime_uploaded');
    const asc = await c('GET', '/files/?ordering=datetime_uploaded');
    expect(desc.json.results.map((f: { uuid: string }) => f.uuid)).toEqual(asc.json.results.map((f: { uuid: string }) => f.uuid).reverse());
    for (const bad of ['limit=0', 'limit=1001', 'limit=x', 'stored=maybe', 'removed=2', 'ordering=size', 'from=yesterday', 'include=everything']) {
      expect((await c('GET', `/files/?${bad}`)).status, bad).toBe(400);
    }
    const future = await c('GET', '/files/?from=2999-01-01T00:00:00Z');
    expect(future.json.results).toEqual([]);
    const jsDate = await c('GET', `/files/?from=${encodeURIComponent(new Date(0).toISOString())}&limit=1`);
    expect(jsDate.json.results).toHaveLength(1);
    expect(jsDate.json.next).toMatch(/^http.*\/files\/\?from=\d{4}-\d{2}-\d{2}T\d{2}%3A\d{2}%3A\d{2}\.\d{6}%2B00%3A00&limit=1&offset=0$/);
  });
});
