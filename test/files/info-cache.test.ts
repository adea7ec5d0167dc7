/**
 * The REST reads of one file (info, tags, metadata) may be answered from the node's cache of file
 * records (src/files/record-cache.ts; SQLite only, kept while the store's change stamp holds).
 * Whatever changes a file, through this node's API or from outside it (another process on the
 * same SQLite file, another node on PostgreSQL), the next read shows it: each case reads the file
 * twice first, so a cached record would be there to go stale.
 */
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { storeWrite } from '../helpers/store-query.js';

const srv = useServer();
const V06 = 'application/vnd.uploadcare-v0.6+json';

async function readTwice(uuid: string): Promise<Record<string, unknown>> {
  await srv.call('GET', `/files/${uuid}/`);
  const r = await srv.call('GET', `/files/${uuid}/`);
  expect(r.status).toBe(200);
  return r.json as Record<string, unknown>;
}

describe('REST reads of one file after a change', () => {
  it('show a change made through the API: metadata, tags, store, delete', async () => {
    const uuid = await srv.uploadFile('a.txt', 'a', { store: false });
    expect((await readTwice(uuid))['metadata']).toEqual({});
    expect((await srv.call('PUT', `/files/${uuid}/metadata/kind/`, { body: '"note"' })).status).toBe(201);
    expect((await srv.call('GET', `/files/${uuid}/`)).json.metadata).toEqual({ kind: 'note' });
    expect((await srv.call('GET', `/files/${uuid}/metadata/kind/`)).json).toBe('note');

    await readTwice(uuid);
    expect((await srv.call('PUT', `/files/${uuid}/tags/`, { body: JSON.stringify({ tags: ['x'] }) })).status).toBe(200);
    expect((await srv.call('GET', `/files/${uuid}/`)).json.tags).toEqual(['x']);
    expect((await srv.call('GET', `/files/${uuid}/tags/`)).json.tags).toEqual(['x']);

    expect((await readTwice(uuid))['datetime_stored']).toBeNull();
    expect((await srv.call('PUT', `/files/${uuid}/storage/`)).status).toBe(200);
    expect((await srv.call('GET', `/files/${uuid}/`)).json.datetime_stored).toEqual(expect.any(String));

    await readTwice(uuid);
    expect((await srv.call('DELETE', `/files/${uuid}/storage/`)).status).toBe(200);
    const removed = (await srv.call('GET', `/files/${uuid}/`)).json;
    expect(removed.datetime_removed).toEqual(expect.any(String));
    expect(removed.original_file_url).toBeNull();
  });

  it('show a change committed by another process on the same store', async () => {
    const uuid = await srv.uploadFile('b.txt', 'b');
    expect((await readTwice(uuid))['metadata']).toEqual({});
    expect(await storeWrite(srv.server, 'update files set metadata = ? where uuid = ?', ['{"from":"outside"}', uuid])).toBe(1);
    expect((await srv.call('GET', `/files/${uuid}/`)).json.metadata).toEqual({ from: 'outside' });
    expect((await srv.call('GET', `/files/${uuid}/metadata/`)).json).toEqual({ from: 'outside' });
    expect(await storeWrite(srv.server, 'update files set tags = ? where uuid = ?', ['["outer"]', uuid])).toBe(1);
    expect((await srv.call('GET', `/files/${uuid}/tags/`)).json.tags).toEqual(['outer']);
    expect((await srv.call('GET', `/files/${uuid}/`)).json.tags).toEqual(['outer']);
  });

  it('answer each API version and `include` in its own shape, whichever was asked first', async () => {
    const uuid = await srv.uploadFile('c.txt', 'c');
    for (let round = 0; round < 2; round++) {
      const v07 = (await srv.call('GET', `/files/${uuid}/`)).json;
      expect(v07).toHaveProperty('content_info');
      expect(v07).not.toHaveProperty('appdata');
      expect((await srv.call('GET', `/files/${uuid}/?include=appdata`)).json.appdata).toEqual({});
      const v06 = (await srv.call('GET', `/files/${uuid}/`, { accept: V06 })).json;
      expect(v06).toHaveProperty('image_info');
      expect(v06).not.toHaveProperty('content_info');
    }
  });

  it('answer 404 for a file of another project, cached or not', async () => {
    const uuid = await srv.uploadFile('d.txt', 'd');
    await readTwice(uuid);
    const other = await srv.newProject();
    expect((await other.call('GET', `/files/${uuid}/`)).status).toBe(404);
  });
});
