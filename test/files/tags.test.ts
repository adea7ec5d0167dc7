/**
 * File tags (wire-reference §2.13, docs/files.md): the Upload API's `tags` field on /base/,
 * /from_url/ and /multipart/start/, the REST routes through the official rest-client's getTags /
 * replaceTags / updateTags, the `tags` list filter, and the webhook payload of a tag change.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { UploadcareAuthSchema, getTags, listOfFiles, replaceTags, updateTags } from '@uploadcare/rest-client';
import { useServer } from '../helpers/use-server.js';
import { uploadBase } from '../helpers/rest.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { startOrigin, type Origin } from '../uploads/origin.js';
import { postForm, postQuery, get, until, bytes } from '../uploads/helpers.js';

let hooks: Receiver;
let origin: Origin;
const s = useServer(async () => {
  [hooks, origin] = await Promise.all([startReceiver(), startOrigin(Buffer.from('from the origin\n'))]);
  return { env: { STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8' } };
});
const settings = () => ({ authSchema: new UploadcareAuthSchema({ publicKey: s.keys.public_key, secretKey: s.keys.secret_key }), apiBaseURL: s.rest });

beforeAll(async () => {
  const form = new URLSearchParams({ target_url: hooks.url, event: 'file.info_updated' }).toString();
  expect((await s.call('POST', '/webhooks/', { body: form, contentType: 'application/x-www-form-urlencoded' })).status).toBe(201);
});

describe('file tags', () => {
  it('are set by the upload `tags` field: lowercased, trimmed, deduplicated, in the order given', async () => {
    const uuid = await s.uploadFile('cat.txt', 'meow', { fields: { tags: ' Cat, animal ,cat,,Pets ' } });
    const info = await get(`${s.upload}/info/?pub_key=${s.keys.public_key}&file_id=${uuid}`);
    expect(info.json.tags).toEqual(['cat', 'animal', 'pets']);
    expect((await s.call('GET', `/files/${uuid}/`)).json.tags).toEqual(['cat', 'animal', 'pets']);
    const plain = await s.uploadFile('plain.txt', 'x');
    expect((await s.call('GET', `/files/${plain}/`)).json.tags).toEqual([]);
    const bad = await uploadBase(s.upload, s.keys.public_key, [{ name: 'long.txt', data: 'l' }], { tags: 'x'.repeat(65) });
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/longer than 64 characters/);
  });

  it('are read, replaced and updated through the official REST client', async () => {
    const uuid = await s.uploadFile('dog.txt', 'woof', { fields: { tags: 'dog' } });
    expect(await getTags({ uuid }, settings())).toEqual({ tags: ['dog'] });
    expect(await replaceTags({ uuid, tags: ['Zebra', 'animal', 'dog'] }, settings())).toEqual({ tags: ['zebra', 'animal', 'dog'], added: ['animal', 'zebra'], deleted: [] });
    // Delete first, then add: `dog` is removed and re-added, so it is neither added nor deleted.
    expect(await updateTags({ uuid, add: ['dog', 'mammal'], delete: ['zebra', 'dog'] }, settings())).toEqual({ tags: ['animal', 'dog', 'mammal'], added: ['mammal'], deleted: ['zebra'] });
    expect(await replaceTags({ uuid, tags: [] }, settings())).toEqual({ tags: [], added: [], deleted: ['animal', 'dog', 'mammal'] });
    expect((await getTags({ uuid }, settings())).tags).toEqual([]);
  });

  it('refuse bad input with a 400 naming the field, and answer 404 for unknown files', async () => {
    const uuid = await s.uploadFile('x.txt', 'x');
    const put = (body: unknown) => s.call('PUT', `/files/${uuid}/tags/`, { body: JSON.stringify(body) });
    expect((await put({})).json.detail).toMatch(/`tags` is required/);
    expect((await put({ tags: 'a' })).json.detail).toMatch(/`tags` must be an array/);
    expect((await put({ tags: [1] })).status).toBe(400);
    expect((await put({ tags: ['a,b'] })).json.detail).toMatch(/comma/);
    expect((await put({ tags: Array.from({ length: 51 }, (_, i) => `t${i}`) })).json.detail).toMatch(/more than 50 tags/);
    expect((await s.call('PATCH', `/files/${uuid}/tags/`, { body: JSON.stringify({ add: 'x' }) })).json.detail).toMatch(/`add` must be an array/);
    expect((await s.call('GET', '/files/00000000-0000-4000-8000-000000000000/tags/')).status).toBe(404);
  });

  it('filter the file list (every listed tag must be present) with a matching total', async () => {
    const a = await s.uploadFile('a.txt', 'a', { fields: { tags: 'fruit,red' } });
    const b = await s.uploadFile('b.txt', 'b', { fields: { tags: 'fruit,yellow' } });
    await s.uploadFile('c.txt', 'c', { fields: { tags: 'red' } });
    const fruit = await s.call('GET', '/files/?tags=fruit&limit=1');
    expect(fruit.json.total).toBe(2);
    expect(fruit.json.results.map((f: { uuid: string }) => f.uuid)).toEqual([a]);
    // The next link keeps the filter.
    expect(fruit.json.next).toContain('tags=fruit');
    const next = await s.call('GET', new URL(fruit.json.next as string).pathname + new URL(fruit.json.next as string).search);
    expect(next.json.results.map((f: { uuid: string }) => f.uuid)).toEqual([b]);
    const both = await listOfFiles({ limit: 100 }, settings());
    expect(both.results.length).toBeGreaterThanOrEqual(3);
    const redFruit = await s.call('GET', '/files/?tags=Fruit,%20red');
    expect(redFruit.json.results.map((f: { uuid: string }) => f.uuid)).toEqual([a]);
    expect(redFruit.json.total).toBe(1);
  });

  it('changes send file.info_updated with the new tags and previous_values.tags', async () => {
    const uuid = await s.uploadFile('hook.txt', 'h', { fields: { tags: 'before' } });
    await s.call('PATCH', `/files/${uuid}/tags/`, { body: JSON.stringify({ add: ['after'] }) });
    const [hit] = await hooks.waitFor(1, 20_000, (r) => r.json?.data?.uuid === uuid);
    expect(hit!.json.data.tags).toEqual(['before', 'after']);
    expect(hit!.json.previous_values).toEqual({ tags: ['before'] });
  });

  it('are taken by /from_url/ and /multipart/start/', async () => {
    const token = await postQuery(`${s.upload}/from_url/`, { pub_key: s.keys.public_key, source_url: `${origin.url}/with-disposition`, tags: 'remote,Fetched' });
    expect(token.status, token.text).toBe(200);
    const done = await until(async () => {
      const st = await get(`${s.upload}/from_url/status/?token=${token.json.token as string}`);
      return st.json.status === 'success' ? st.json : undefined;
    });
    expect(done.tags).toEqual(['remote', 'fetched']);

    const size = 10_485_760;
    const start = await postForm(`${s.upload}/multipart/start/`, { UPLOADCARE_PUB_KEY: s.keys.public_key, filename: 'big.bin', content_type: 'application/octet-stream', size: String(size), tags: 'big' });
    expect(start.status, start.text).toBe(200);
    const data = bytes(size);
    const parts = start.json.parts as string[];
    const partSize = Math.ceil(size / parts.length);
    for (const [i, url] of parts.entries()) {
      const r = await fetch(url, { method: 'PUT', body: data.subarray(i * partSize, (i + 1) * partSize) });
      expect(r.status).toBe(200);
    }
    const complete = await postForm(`${s.upload}/multipart/complete/`, { UPLOADCARE_PUB_KEY: s.keys.public_key, uuid: start.json.uuid as string });
    expect(complete.status, complete.text).toBe(200);
    expect(complete.json.tags).toEqual(['big']);
  }, 120_000);
});
