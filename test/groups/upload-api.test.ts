/** Upload API groups: POST /group/ in every encoding the clients use, /group/info/, errors (wire-reference §1.9). */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadFileGroup, groupInfo } from '@uploadcare/upload-client';
import { startServer, type ProjectKeys, type TestServer } from '../helpers/server.js';
import { restClient } from '../helpers/rest.js';
import { makeGroup, postGroup, upload } from './helpers.js';

let server: TestServer;
let keys: ProjectKeys;

beforeAll(async () => {
  server = await startServer();
  keys = await server.createProject();
});
afterAll(async () => server?.stop());

describe('POST /group/', () => {
  it('works with the official SDK uploadFileGroup (files uploaded, then grouped) and groupInfo', async () => {
    const opts = { publicKey: keys.public_key, baseURL: server.upload, baseCDN: server.cdn, store: true };
    const group = await uploadFileGroup([Buffer.from('first file'), Buffer.from('second, longer file')], opts);
    expect(group.uuid).toMatch(/^[0-9a-f-]{36}~2$/);
    expect(group.filesCount).toBe(2);
    expect(group.totalSize).toBe(10 + 19);
    expect(group.cdnUrl).toBe(`${server.cdn}/${group.uuid}/`);
    expect(group.files.map((f) => f.size)).toEqual([10, 19]);
    const info = await groupInfo(group.uuid, { publicKey: keys.public_key, baseURL: server.upload });
    expect(info.id).toBe(group.uuid);
    expect(info.files?.map((f) => f?.uuid)).toEqual(group.files.map((f) => f.uuid));
  });

  it('keeps default_effects from uuid/-/ops/ entries passed to the SDK', async () => {
    const a = await upload(server, keys, 'a.txt', 'aaa');
    const group = await uploadFileGroup([`${a}/-/resize/x800/`, a], { publicKey: keys.public_key, baseURL: server.upload, baseCDN: server.cdn });
    expect(group.filesCount).toBe(2);
    const r = await fetch(`${server.upload}/group/info/?pub_key=${keys.public_key}&group_id=${group.uuid}`);
    const body = await r.json();
    expect(body.files.map((f: { default_effects: string }) => f.default_effects)).toEqual(['resize/x800/', '']);
  });

  it('answers the exact upload-API shape', async () => {
    const a = await upload(server, keys, 'Photo 1.txt', 'hello');
    const r = await postGroup(server, [['pub_key', keys.public_key], ['files[]', a]]);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ datetime_stored: null, files_count: 1 });
    expect(Object.keys(r.json)).toEqual(['id', 'datetime_created', 'datetime_stored', 'files_count', 'cdn_url', 'url', 'files']);
    expect(r.json.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}~1$/);
    expect(r.json.datetime_created).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    expect(r.json.cdn_url).toBe(`${server.cdn}/${r.json.id}/`);
    expect(r.json.url).toBe(`${server.rest}/groups/${r.json.id}/`);
    expect(r.json.files[0]).toMatchObject({ uuid: a, file_id: a, size: 5, total: 5, done: 5, original_filename: 'Photo 1.txt', filename: 'Photo1.txt', is_stored: true, is_ready: true, default_effects: '' });
  });

  it('orders files[N] by index (pyuploadcare, urlencoded) and accepts CDN URLs', async () => {
    const [a, b, c] = [await upload(server, keys, 'a.txt', 'a'), await upload(server, keys, 'b.txt', 'b'), await upload(server, keys, 'c.txt', 'c')];
    const body = new URLSearchParams([['pub_key', keys.public_key], ['files[2]', `https://cdn.example.com/${c}/`], ['files[0]', a], ['files[1]', `${server.cdn}/${b}/-/preview/100x100/-/flip/`]]);
    const res = await fetch(`${server.upload}/group//`, { method: 'POST', body });
    const json = await res.json();
    expect(res.status).toBe(200);
    expect(json.files.map((f: { uuid: string }) => f.uuid)).toEqual([a, b, c]);
    expect(json.files.map((f: { default_effects: string }) => f.default_effects)).toEqual(['', 'preview/100x100/-/flip/', '']);
  });

  it('accepts files[] in the query string of a body-less POST', async () => {
    const a = await upload(server, keys, 'a.txt', 'a');
    const res = await fetch(`${server.upload}/group/?pub_key=${keys.public_key}&files[]=${a}&files[]=${a}`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect((await res.json()).id).toMatch(/~2$/);
  });

  it('refuses requests without files, with bad entries, foreign or removed files, and too many files', async () => {
    const own = await upload(server, keys, 'own.txt', 'own');
    const other = await server.createProject();
    const foreign = await upload(server, other, 'f.txt', 'f');
    const removed = await upload(server, keys, 'r.txt', 'r');
    expect((await restClient(server.rest, keys)('DELETE', `/files/${removed}/storage/`)).status).toBe(200);
    const cases: Array<[Array<[string, string]>, number, string]> = [
      [[['pub_key', keys.public_key]], 400, 'No files[N] parameters found.'],
      [[['pub_key', keys.public_key], ['files[]', 'not-a-uuid']], 400, 'This is not valid file url: not-a-uuid.'],
      [[['pub_key', keys.public_key], ['files[]', `${own}/-/nonsense/1/`]], 400, `This is not valid file url: ${own}/-/nonsense/1/.`],
      [[['pub_key', keys.public_key], ['files[]', own], ['files[]', foreign]], 400, 'Some files not found.'],
      [[['pub_key', keys.public_key], ['files[]', removed]], 400, 'Some files not found.'],
      [[['pub_key', keys.public_key], ['files[]', crypto.randomUUID()]], 400, 'Some files not found.'],
      [[['files[]', own]], 403, 'pub_key is required.'],
      [[['pub_key', 'nope'], ['files[]', own]], 403, 'pub_key is invalid.'],
      [[['pub_key', keys.public_key], ...Array.from({ length: 1001 }, (): [string, string] => ['files[]', own])], 400, 'There are too many files.'],
    ];
    for (const [pairs, status, text] of cases) {
      const r = await postGroup(server, pairs);
      expect([r.status, r.text]).toEqual([status, text]);
    }
    const j = await postGroup(server, [['pub_key', keys.public_key]], '?jsonerrors=1');
    expect(j.status).toBe(200);
    expect(j.json).toEqual({ error: { status_code: 400, content: 'No files[N] parameters found.', error_code: 'GroupFilesInvalidError' } });
  });

  it('takes exactly 1000 files', async () => {
    const a = await upload(server, keys, 'a.txt', 'a');
    const r = await postGroup(server, [['pub_key', keys.public_key], ...Array.from({ length: 1000 }, (): [string, string] => ['files[]', a])]);
    expect(r.status, r.text).toBe(200);
    expect(r.json.files_count).toBe(1000);
    expect(r.json.files).toHaveLength(1000);
  });

  it('requires a credential when the project has signed uploads, and accepts a valid signature', async () => {
    const signed = await server.createProject(['--signed-uploads']);
    const expire = String(Math.floor(Date.now() / 1000) + 600);
    const signature = crypto.createHmac('sha256', signed.secret_key).update(expire).digest('hex');
    const f = await upload(server, signed, 'x.txt', 'x').catch(() => null);
    // Uploading needs a credential too; make the file with one.
    const form = new FormData();
    form.append('file', new Blob(['signed']), 's.txt');
    form.append('UPLOADCARE_PUB_KEY', signed.public_key);
    form.append('signature', signature);
    form.append('expire', expire);
    const up = await (await fetch(`${server.upload}/base/`, { method: 'POST', body: form })).json();
    expect(f).toBeNull();
    const unsigned = await postGroup(server, [['pub_key', signed.public_key], ['files[]', up.file]]);
    expect([unsigned.status, unsigned.text]).toEqual([400, '`signature` is required.']);
    const ok = await postGroup(server, [['pub_key', signed.public_key], ['files[]', up.file], ['signature', signature], ['expire', expire]]);
    expect(ok.status, ok.text).toBe(200);
  });
});

describe('GET /group/info/', () => {
  it('returns the group, and the wire errors for missing, malformed, unknown and foreign ids', async () => {
    const a = await upload(server, keys, 'a.txt', 'a');
    const id = await makeGroup(server, keys, [a]);
    const info = async (q: string, pub = keys.public_key) => {
      const res = await fetch(`${server.upload}/group/info/?pub_key=${pub}${q}`);
      return [res.status, await res.text()];
    };
    const ok = await fetch(`${server.upload}/group/info/?pub_key=${keys.public_key}&group_id=${id}`);
    expect((await ok.json()).files[0].uuid).toBe(a);
    expect(await info('')).toEqual([400, 'group_id is required.']);
    expect(await info('&group_id=junk')).toEqual([404, 'group_id is invalid.']);
    expect(await info(`&group_id=${crypto.randomUUID()}~1`)).toEqual([404, 'group_id is invalid.']);
    expect(await info(`&group_id=${id.replace(/~1$/, '~2')}`)).toEqual([404, 'group_id is invalid.']);
    const other = await server.createProject();
    expect(await info(`&group_id=${id}`, other.public_key)).toEqual([404, 'group_id is invalid.']);
  });
});
