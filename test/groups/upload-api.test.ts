/** Upload API groups: POST /group/ in every encoding the clients use, /group/info/, errors (wire-reference §1.9). */
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { uploadFileGroup, groupInfo } from '@uploadcare/upload-client';
import { useServer } from '../helpers/use-server.js';
import { makeGroup, png, postGroup, upload } from './helpers.js';

const srv = useServer();

describe('POST /group/', () => {
  it('works with the official SDK uploadFileGroup (files uploaded, then grouped) and groupInfo', async () => {
    const opts = { publicKey: srv.keys.public_key, baseURL: srv.upload, baseCDN: srv.cdn, store: true };
    const group = await uploadFileGroup([Buffer.from('first file'), Buffer.from('second, longer file')], opts);
    expect(group.uuid).toMatch(/^[0-9a-f-]{36}~2$/);
    expect(group.filesCount).toBe(2);
    expect(group.totalSize).toBe(10 + 19);
    expect(group.cdnUrl).toBe(`${srv.cdn}/${group.uuid}/`);
    expect(group.files.map((f) => f.size)).toEqual([10, 19]);
    const info = await groupInfo(group.uuid, { publicKey: srv.keys.public_key, baseURL: srv.upload });
    expect(info.id).toBe(group.uuid);
    expect(info.files?.map((f) => f?.uuid)).toEqual(group.files.map((f) => f.uuid));
  });

  it('keeps default_effects from uuid/-/ops/ entries passed to the SDK', async () => {
    const a = await upload(srv.server, srv.keys, 'a.txt', 'aaa');
    const group = await uploadFileGroup([`${a}/-/resize/x800/`, a], { publicKey: srv.keys.public_key, baseURL: srv.upload, baseCDN: srv.cdn });
    expect(group.filesCount).toBe(2);
    const r = await fetch(`${srv.upload}/group/info/?pub_key=${srv.keys.public_key}&group_id=${group.uuid}`);
    const body = await r.json();
    expect(body.files.map((f: { default_effects: string }) => f.default_effects)).toEqual(['resize/x800/', '']);
  });

  it('carries content_info.image (and image_info) for image entries, as /info/ does', async () => {
    const image = await upload(srv.server, srv.keys, 'red.png', await png(12, 7), 'image/png');
    const r = await postGroup(srv.server, [['pub_key', srv.keys.public_key], ['files[]', image]]);
    expect(r.status, r.text).toBe(200);
    const info = await (await fetch(`${srv.upload}/info/?pub_key=${srv.keys.public_key}&file_id=${image}`)).json();
    expect(r.json.files[0].content_info.image).toMatchObject({ width: 12, height: 7, format: 'PNG' });
    expect(r.json.files[0].content_info).toEqual(info.content_info);
    expect(r.json.files[0].image_info).toEqual(info.content_info.image);
    const again = await fetch(`${srv.upload}/group/info/?pub_key=${srv.keys.public_key}&group_id=${r.json.id}`);
    expect(((await again.json()) as { files: Array<{ content_info: unknown }> }).files[0]!.content_info).toEqual(info.content_info);
  });

  it('answers the exact upload-API shape', async () => {
    const a = await upload(srv.server, srv.keys, 'Photo 1.txt', 'hello');
    const r = await postGroup(srv.server, [['pub_key', srv.keys.public_key], ['files[]', a]]);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ datetime_stored: null, files_count: 1 });
    expect(Object.keys(r.json)).toEqual(['id', 'datetime_created', 'datetime_stored', 'files_count', 'cdn_url', 'url', 'files']);
    expect(r.json.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}~1$/);
    expect(r.json.datetime_created).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    expect(r.json.cdn_url).toBe(`${srv.cdn}/${r.json.id}/`);
    expect(r.json.url).toBe(`${srv.rest}/groups/${r.json.id}/`);
    expect(r.json.files[0]).toMatchObject({ uuid: a, file_id: a, size: 5, total: 5, done: 5, original_filename: 'Photo 1.txt', filename: 'Photo1.txt', is_stored: true, is_ready: true, default_effects: '' });
  });

  it('orders files[N] by index (pyuploadcare, urlencoded) and accepts CDN URLs', async () => {
    const [a, b, c] = [await upload(srv.server, srv.keys, 'a.txt', 'a'), await upload(srv.server, srv.keys, 'b.txt', 'b'), await upload(srv.server, srv.keys, 'c.txt', 'c')];
    const body = new URLSearchParams([['pub_key', srv.keys.public_key], ['files[2]', `https://cdn.example.com/${c}/`], ['files[0]', a], ['files[1]', `${srv.cdn}/${b}/-/preview/100x100/-/flip/`]]);
    const res = await fetch(`${srv.upload}/group//`, { method: 'POST', body });
    const json = await res.json();
    expect(res.status).toBe(200);
    expect(json.files.map((f: { uuid: string }) => f.uuid)).toEqual([a, b, c]);
    expect(json.files.map((f: { default_effects: string }) => f.default_effects)).toEqual(['', 'preview/100x100/-/flip/', '']);
  });

  it('accepts files[] in the query string of a body-less POST', async () => {
    const a = await upload(srv.server, srv.keys, 'a.txt', 'a');
    const res = await fetch(`${srv.upload}/group/?pub_key=${srv.keys.public_key}&files[]=${a}&files[]=${a}`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect((await res.json()).id).toMatch(/~2$/);
  });

  it('refuses requests without files, with bad entries, foreign or removed files, and too many files', async () => {
    const own = await upload(srv.server, srv.keys, 'own.txt', 'own');
    const other = await srv.server.createProject();
    const foreign = await upload(srv.server, other, 'f.txt', 'f');
    const removed = await upload(srv.server, srv.keys, 'r.txt', 'r');
    expect((await srv.call('DELETE', `/files/${removed}/storage/`)).status).toBe(200);
    const cases: Array<[Array<[string, string]>, number, string]> = [
      [[['pub_key', srv.keys.public_key]], 400, 'No files[N] parameters found.'],
      [[['pub_key', srv.keys.public_key], ['files[]', 'not-a-uuid']], 400, 'This is not valid file url: not-a-uuid.'],
      [[['pub_key', srv.keys.public_key], ['files[]', `${own}/-/nonsense/1/`]], 400, `This is not valid file url: ${own}/-/nonsense/1/.`],
      [[['pub_key', srv.keys.public_key], ['files[]', own], ['files[]', foreign]], 400, 'Some files not found.'],
      [[['pub_key', srv.keys.public_key], ['files[]', removed]], 400, 'Some files not found.'],
      [[['pub_key', srv.keys.public_key], ['files[]', crypto.randomUUID()]], 400, 'Some files not found.'],
      [[['files[]', own]], 403, 'pub_key is required.'],
      [[['pub_key', 'nope'], ['files[]', own]], 403, 'pub_key is invalid.'],
      [[['pub_key', srv.keys.public_key], ...Array.from({ length: 1001 }, (): [string, string] => ['files[]', own])], 400, 'There are too many files.'],
    ];
    for (const [pairs, status, text] of cases) {
      const r = await postGroup(srv.server, pairs);
      expect([r.status, r.text]).toEqual([status, text]);
    }
    const j = await postGroup(srv.server, [['pub_key', srv.keys.public_key]], '?jsonerrors=1');
    expect(j.status).toBe(200);
    expect(j.json).toEqual({ error: { status_code: 400, content: 'No files[N] parameters found.', error_code: 'GroupFilesInvalidError' } });
  });

  it('takes exactly 1000 files', async () => {
    const a = await upload(srv.server, srv.keys, 'a.txt', 'a');
    const r = await postGroup(srv.server, [['pub_key', srv.keys.public_key], ...Array.from({ length: 1000 }, (): [string, string] => ['files[]', a])]);
    expect(r.status, r.text).toBe(200);
    expect(r.json.files_count).toBe(1000);
    expect(r.json.files).toHaveLength(1000);
  });

  it('requires a credential when the project has signed uploads, and accepts a valid signature', async () => {
    const signed = await srv.server.createProject(['--signed-uploads']);
    const expire = String(Math.floor(Date.now() / 1000) + 600);
    const signature = crypto.createHmac('sha256', signed.secret_key).update(expire).digest('hex');
    const f = await upload(srv.server, signed, 'x.txt', 'x').catch(() => null);
    // Uploading needs a credential too; make the file with one.
    const form = new FormData();
    form.append('file', new Blob(['signed']), 's.txt');
    form.append('UPLOADCARE_PUB_KEY', signed.public_key);
    form.append('signature', signature);
    form.append('expire', expire);
    const up = await (await fetch(`${srv.upload}/base/`, { method: 'POST', body: form })).json();
    expect(f).toBeNull();
    const unsigned = await postGroup(srv.server, [['pub_key', signed.public_key], ['files[]', up.file]]);
    expect([unsigned.status, unsigned.text]).toEqual([400, '`signature` is required.']);
    const ok = await postGroup(srv.server, [['pub_key', signed.public_key], ['files[]', up.file], ['signature', signature], ['expire', expire]]);
    expect(ok.status, ok.text).toBe(200);
  });
});

describe('GET /group/info/', () => {
  it('returns the group, and the wire errors for missing, malformed, unknown and foreign ids', async () => {
    const a = await upload(srv.server, srv.keys, 'a.txt', 'a');
    const id = await makeGroup(srv.server, srv.keys, [a]);
    const info = async (q: string, pub = srv.keys.public_key) => {
      const res = await fetch(`${srv.upload}/group/info/?pub_key=${pub}${q}`);
      return [res.status, await res.text()];
    };
    const ok = await fetch(`${srv.upload}/group/info/?pub_key=${srv.keys.public_key}&group_id=${id}`);
    expect((await ok.json()).files[0].uuid).toBe(a);
    expect(await info('')).toEqual([400, 'group_id is required.']);
    expect(await info('&group_id=junk')).toEqual([404, 'group_id is invalid.']);
    expect(await info(`&group_id=${crypto.randomUUID()}~1`)).toEqual([404, 'group_id is invalid.']);
    expect(await info(`&group_id=${id.replace(/~1$/, '~2')}`)).toEqual([404, 'group_id is invalid.']);
    const other = await srv.server.createProject();
    expect(await info(`&group_id=${id}`, other.public_key)).toEqual([404, 'group_id is invalid.']);
  });
});
