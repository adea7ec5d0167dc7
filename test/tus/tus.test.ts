/**
 * tus 1.0.0 resumable uploads (docs/tus.md) against a real server, driven by the official
 * tus-js-client where it can be, and by raw requests for the protocol's edges: a full upload makes
 * an ordinary file, an interrupted PATCH resumes from what the server made durable, checksums,
 * termination, authentication before any byte, size limits.
 */
import crypto from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tus from 'tus-js-client';
import { useServer } from '../helpers/use-server.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { request } from '../helpers/http.js';
import { bytes, until } from '../uploads/helpers.js';
import { create, errorStatus, head, patch, stagedFiles, stagedSize, TUS, tusUpload } from './helpers.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const MAX = 8 * MiB;
const srv = useServer({ env: { STOWAGE_MAX_UPLOAD_BYTES: String(MAX), STOWAGE_TUS_PROJECT_MAX_BYTES: String(12 * MiB), STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8' } });
let hooks: Receiver;
beforeAll(async () => {
  hooks = await startReceiver();
  const hook = await srv.call('POST', '/webhooks/', { body: new URLSearchParams({ target_url: hooks.url, event: 'file.uploaded' }).toString(), contentType: 'application/x-www-form-urlencoded' });
  expect(hook.status).toBe(201);
});
afterAll(async () => {
  await hooks?.close();
});

const endpoint = () => `${srv.upload}/tus/`;
const key = () => ({ UPLOADCARE_PUB_KEY: srv.keys.public_key });
const cdnBytes = async (uuid: string) => Buffer.from(await (await fetch(`${srv.cdn}/${uuid}/`)).arrayBuffer());
const sha = (b: Buffer) => crypto.createHash('sha1').update(b).digest('base64');

describe('discovery and CORS', () => {
  it('answers OPTIONS with the version, extensions, max size and checksum algorithms', async () => {
    const r = await request(endpoint(), { method: 'OPTIONS' });
    expect(r.status).toBe(204);
    expect(r.headers.get('tus-version')).toBe('1.0.0');
    expect(r.headers.get('tus-resumable')).toBe('1.0.0');
    expect(r.headers.get('tus-extension')?.split(',').sort()).toEqual(['checksum', 'creation', 'creation-with-upload', 'expiration', 'termination']);
    expect(r.headers.get('tus-max-size')).toBe(String(MAX));
    expect(r.headers.get('tus-checksum-algorithm')?.split(',')).toContain('sha1');
  });

  it('lets a browser PATCH across origins and read the tus headers', async () => {
    const pre = await request(`${endpoint()}0b6f4b0e-4a55-4d4e-9d0b-1b1f1a0c9e11`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'tus-resumable,upload-offset,content-type' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-methods')).toContain('PATCH');
    expect(pre.headers.get('access-control-allow-headers')).toContain('upload-offset');
    const r = await create(srv.upload, 3, key());
    expect(r.status).toBe(201);
    const exposed = (r.headers.get('access-control-expose-headers') ?? '').toLowerCase();
    for (const h of ['location', 'upload-offset', 'upload-length', 'upload-expires', 'tus-resumable', 'stowage-file-uuid']) expect(exposed).toContain(h);
  });
});

describe('uploads with tus-js-client', () => {
  it('uploads a file in several PATCHes and makes an ordinary file with its parameters', async () => {
    const data = bytes(700 * KiB, 3);
    const r = await tusUpload(data, {
      endpoint: endpoint(),
      chunkSize: 256 * KiB,
      metadata: { ...key(), filename: 'report.bin', filetype: 'application/x-report', UPLOADCARE_STORE: '1', 'metadata[kind]': 'tus' },
    });
    expect(r.patchOffsets).toEqual([0, 256 * KiB, 512 * KiB]);
    expect(r.fileUuid).toMatch(/^[0-9a-f-]{36}$/);
    const uuid = r.fileUuid as string;
    const file = await srv.call('GET', `/files/${uuid}/`);
    expect(file.status).toBe(200);
    expect(file.json).toMatchObject({ size: data.length, original_filename: 'report.bin', mime_type: 'application/x-report', metadata: { kind: 'tus' } });
    expect(file.json.datetime_stored).not.toBeNull();
    expect((await cdnBytes(uuid)).equals(data)).toBe(true);
    // The same event as any other upload, with the file as the REST API shows it.
    const [hit] = await hooks.waitFor(1, 20_000, (h) => h.json?.data?.uuid === uuid);
    expect(hit!.json).toMatchObject({ initiator: { type: 'api' }, hook: { event: 'file.uploaded' }, data: { uuid, size: data.length, original_filename: 'report.bin', metadata: { kind: 'tus' } } });
    // The upload's URL names the same file, by HEAD and by its info resource (as /info/ answers).
    const h = await head(r.url);
    expect(h.status).toBe(200);
    expect(h.headers.get('upload-offset')).toBe(String(data.length));
    expect(h.headers.get('upload-length')).toBe(String(data.length));
    expect(h.headers.get('cache-control')).toBe('no-store');
    expect(h.headers.get('stowage-file-uuid')).toBe(uuid);
    const info = await request(`${r.url}/info/`);
    expect(info.status).toBe(200);
    expect(info.json).toMatchObject({ uuid, size: data.length, is_stored: true, filename: 'report.bin' });
    expect(stagedFiles(srv.server.dataDir)).not.toContain(r.url.split('/').pop());
  });

  it('sends the data with the creation request (creation-with-upload), unstored when asked', async () => {
    const data = bytes(100 * KiB, 4);
    const r = await tusUpload(data, { endpoint: endpoint(), uploadDataDuringCreation: true, metadata: { ...key(), filename: 'one.bin', UPLOADCARE_STORE: '0' } });
    expect(r.patchOffsets).toEqual([]);
    const file = await srv.call('GET', `/files/${r.fileUuid}/`);
    expect(file.json).toMatchObject({ size: data.length, original_filename: 'one.bin', datetime_stored: null });
    expect((await cdnBytes(r.fileUuid as string)).equals(data)).toBe(true);
  });

  it('resumes an aborted upload from the offset the server recorded', async () => {
    const data = bytes(1 * MiB, 5);
    // abort() settles neither of the client's callbacks: the test waits for its own signal.
    const url = await new Promise<string>((resolve, reject) => {
      tusUpload(data, {
        endpoint: endpoint(),
        chunkSize: 256 * KiB,
        metadata: { ...key(), filename: 'resumed.bin' },
        withUpload: (u) => {
          u.options.onChunkComplete = (_chunk, accepted) => {
            if (accepted < 512 * KiB) return;
            void u.abort();
            resolve(u.url ?? '');
          };
        },
      }).then(() => reject(new Error('the upload finished before it was aborted')), reject);
    });
    // Two chunks were acknowledged; a third may have begun before the abort and kept what arrived.
    const offset = Number((await head(url)).headers.get('upload-offset'));
    expect(offset).toBeGreaterThanOrEqual(512 * KiB);
    expect(offset).toBeLessThan(data.length);
    const r = await tusUpload(data, { endpoint: endpoint(), uploadUrl: url, chunkSize: 256 * KiB });
    expect(r.patchOffsets[0]).toBe(offset);
    expect((await cdnBytes(r.fileUuid as string)).equals(data)).toBe(true);
  });

  it('keeps the bytes of a PATCH whose client went away mid-body, and resumes after them', async () => {
    const data = bytes(600 * KiB, 6);
    const c = await create(srv.upload, data.length, key());
    const url = c.headers.get('location') as string;
    const sent = 200 * KiB;
    // Node drops body bytes its handler has not read yet when the connection closes: the client
    // leaves once the server has written what it sent.
    const id = url.split('/').pop() as string;
    await partialPatch(url, 0, data.length, data.subarray(0, sent), () => until(async () => (stagedSize(srv.server.dataDir, id) === sent ? true : undefined)));
    const offset = await until(async () => {
      const h = await head(url);
      return h.status === 200 && h.headers.get('upload-offset') === String(sent) ? sent : undefined;
    });
    const rest = await patch(url, offset, data.subarray(offset));
    expect(rest.status).toBe(204);
    expect(rest.headers.get('upload-offset')).toBe(String(data.length));
    expect((await cdnBytes(rest.headers.get('stowage-file-uuid') as string)).equals(data)).toBe(true);
  });

  it('terminates an upload: its bytes are gone and its URL answers 404', async () => {
    const data = bytes(300 * KiB, 7);
    const url = await new Promise<string>((resolve, reject) => {
      tusUpload(data, {
        endpoint: endpoint(),
        chunkSize: 100 * KiB,
        metadata: key(),
        withUpload: (u) => {
          u.options.onChunkComplete = () => {
            void u.abort();
            resolve(u.url ?? '');
          };
        },
      }).then(() => reject(new Error('the upload finished before it was aborted')), reject);
    });
    const id = url.split('/').pop() as string;
    expect(stagedFiles(srv.server.dataDir)).toContain(id);
    await tus.Upload.terminate(url, { retryDelays: [] });
    expect((await head(url)).status).toBe(404);
    expect(stagedFiles(srv.server.dataDir)).not.toContain(id);
    expect((await patch(url, 100 * KiB, data.subarray(100 * KiB))).status).toBe(404);
  });
});

describe('the protocol', () => {
  it('checks Upload-Checksum: a mismatch is 460 and the chunk is discarded', async () => {
    const data = bytes(64 * KiB, 8);
    const url = (await create(srv.upload, data.length * 2, key())).headers.get('location') as string;
    const bad = await patch(url, 0, data, { 'upload-checksum': `sha1 ${sha(Buffer.from('something else'))}` });
    expect(bad.status).toBe(460);
    expect((await head(url)).headers.get('upload-offset')).toBe('0');
    expect((await patch(url, 0, data, { 'upload-checksum': `crc32 ${sha(data)}` })).status).toBe(400);
    const good = await patch(url, 0, data, { 'upload-checksum': `sha1 ${sha(data)}` });
    expect(good.status).toBe(204);
    expect(good.headers.get('upload-offset')).toBe(String(data.length));
    const md5 = crypto.createHash('md5').update(data).digest('base64');
    const last = await patch(url, data.length, data, { 'upload-checksum': `md5 ${md5}` });
    expect(last.status).toBe(204);
    expect((await cdnBytes(last.headers.get('stowage-file-uuid') as string)).equals(Buffer.concat([data, data]))).toBe(true);
  });

  it('completes an empty upload at creation', async () => {
    const r = await create(srv.upload, 0, { ...key(), filename: 'empty.txt' });
    expect(r.status).toBe(201);
    const uuid = r.headers.get('stowage-file-uuid') as string;
    expect(uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect((await srv.call('GET', `/files/${uuid}/`)).json).toMatchObject({ size: 0, original_filename: 'empty.txt' });
    expect((await head(r.headers.get('location') as string)).headers.get('upload-offset')).toBe('0');
  });

  it('answers 409 for a wrong offset, 412 without Tus-Resumable, 415 for another Content-Type, 413 past the length', async () => {
    const url = (await create(srv.upload, 10, key())).headers.get('location') as string;
    expect((await patch(url, 5, Buffer.from('abc'))).status).toBe(409);
    const noVersion = await request(url, { method: 'PATCH', headers: { 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }, body: 'abc' });
    expect(noVersion.status).toBe(412);
    expect(noVersion.headers.get('tus-version')).toBe('1.0.0');
    expect((await patch(url, 0, Buffer.from('abc'), { 'content-type': 'application/octet-stream' })).status).toBe(415);
    expect((await patch(url, 0, Buffer.from('0123456789ab'))).status).toBe(413);
    expect((await head(url)).headers.get('upload-offset')).toBe('0');
    const h = await head(url);
    expect(h.headers.get('upload-expires')).toMatch(/GMT$/);
    expect(Date.parse(h.headers.get('upload-expires') as string)).toBeGreaterThan(Date.now());
    expect((await request(`${url}/info/`)).status).toBe(409);
  });

  it('refuses a missing or unknown public key before any byte, with nothing staged', async () => {
    const before = stagedFiles(srv.server.dataDir).length;
    const missing = await tusUpload(Buffer.from('hello'), { endpoint: endpoint(), metadata: { filename: 'a.txt' } }).catch((e: unknown) => e);
    expect(errorStatus(missing)).toBe(403);
    const unknown = await create(srv.upload, 5, { UPLOADCARE_PUB_KEY: 'not-a-key' }, { 'content-type': 'application/offset+octet-stream' });
    expect(unknown.status).toBe(403);
    const withBody = await request(endpoint(), {
      method: 'POST',
      headers: { ...TUS, 'upload-length': '5', 'upload-metadata': `pub_key ${Buffer.from('nope').toString('base64')}`, 'content-type': 'application/offset+octet-stream' },
      body: 'hello',
    });
    expect(withBody.status).toBe(403);
    expect(stagedFiles(srv.server.dataDir).length).toBe(before);
    expect((await create(srv.upload, 5, key(), { 'upload-metadata': 'bad header value!' })).status).toBe(400);
  });

  it('enforces the size limit per upload and the open bytes per project', async () => {
    const tooBig = await tusUpload(bytes(MAX + 1), { endpoint: endpoint(), metadata: key() }).catch((e: unknown) => e);
    expect(errorStatus(tooBig)).toBe(413);
    const other = await srv.newProject();
    const meta = { UPLOADCARE_PUB_KEY: other.keys.public_key };
    const a = await create(srv.upload, 6 * MiB, meta);
    const b = await create(srv.upload, 6 * MiB, meta);
    expect([a.status, b.status]).toEqual([201, 201]);
    const c = await create(srv.upload, 1, meta);
    expect(c.status).toBe(413);
    expect((await request(a.headers.get('location') as string, { method: 'DELETE', headers: TUS })).status).toBe(204);
    expect((await create(srv.upload, 1, meta)).status).toBe(201);
    expect((await create(srv.upload, 5, { ...meta }, { 'upload-defer-length': '1', 'upload-length': '' })).status).toBe(400);
  });

  it('takes signed-upload credentials from Upload-Metadata', async () => {
    const signed = await srv.newProject(['--signed-uploads']);
    const expire = String(Math.floor(Date.now() / 1000) + 600);
    const signature = crypto.createHmac('sha256', signed.keys.secret_key).update(expire).digest('hex');
    const meta = { UPLOADCARE_PUB_KEY: signed.keys.public_key };
    const unsigned = await tusUpload(Buffer.from('signed'), { endpoint: endpoint(), metadata: meta }).catch((e: unknown) => e);
    expect(errorStatus(unsigned)).toBe(400);
    const forged = await create(srv.upload, 6, { ...meta, signature: signature.replace(/^./, (ch) => (ch === 'a' ? 'b' : 'a')), expire });
    expect(forged.status).toBe(403);
    const r = await tusUpload(Buffer.from('signed'), { endpoint: endpoint(), metadata: { ...meta, signature, expire } });
    expect((await cdnBytes(r.fileUuid as string)).toString()).toBe('signed');
  });
});

/** Sends PATCH headers declaring `total - offset` bytes, then `part` of them, then drops the connection. */
async function partialPatch(url: string, offset: number, total: number, part: Buffer, beforeLeaving: () => Promise<unknown>): Promise<void> {
  const u = new URL(url);
  const socket = net.connect(Number(u.port), u.hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(
    `PATCH ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nTus-Resumable: 1.0.0\r\nContent-Type: application/offset+octet-stream\r\n` +
      `Upload-Offset: ${offset}\r\nContent-Length: ${total - offset}\r\n\r\n`,
  );
  await new Promise<void>((resolve) => socket.write(part, () => resolve()));
  await beforeLeaving();
  await new Promise<void>((resolve) => socket.end(resolve));
  socket.destroy();
}
