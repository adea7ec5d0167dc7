/**
 * The official upload SDK (@uploadcare/upload-client from npm) against a real server: a small
 * direct upload, a 30 MB multipart upload with concurrent parts, and an upload from a URL that this
 * test serves itself. A recording proxy in front of the Upload API shows which paths the SDK took.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import { uploadFile } from '@uploadcare/upload-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usingS3 } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { bytes, get } from './helpers.js';
import { freePort, startProxy, type RecordingProxy } from './proxy.js';

let proxy: RecordingProxy;
let port: number;
let origin: http.Server;
let originUrl: string;
const served = bytes(300_000, 5);

beforeAll(async () => {
  proxy = await startProxy();
  port = await freePort();
});
// Public upload URL = the proxy, so part URLs handed out by /multipart/start/ go through it too.
const srv = useServer(() => ({ env: { STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8', STOWAGE_UPLOAD_PORT: String(port), STOWAGE_UPLOAD_BASE_URL: proxy.url } }));
beforeAll(async () => {
  proxy.setTarget(`http://127.0.0.1:${port}`);
  origin = http.createServer((req, res) => {
    if (req.url === '/files/report.bin') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(served.length) });
      res.end(served);
    } else res.writeHead(404).end();
  });
  await new Promise<void>((r) => origin.listen(0, '127.0.0.1', () => r()));
  originUrl = `http://127.0.0.1:${(origin.address() as net.AddressInfo).port}`;
});
afterAll(async () => {
  await proxy?.close();
  origin?.close();
});

const sdk = () => ({ publicKey: srv.keys.public_key, baseURL: proxy.url, baseCDN: srv.cdn });

async function info(uuid: string) {
  const r = await get(`${srv.upload}/info/?pub_key=${srv.keys.public_key}&file_id=${uuid}`);
  expect(r.status).toBe(200);
  return r.json;
}

async function cdnBytes(uuid: string): Promise<Buffer> {
  const r = await fetch(`${srv.cdn}/${uuid}/`);
  expect(r.status).toBe(200);
  return Buffer.from(await r.arrayBuffer());
}

describe('@uploadcare/upload-client uploadFile', () => {
  it('uploads a small Buffer directly (/base/)', async () => {
    proxy.paths.length = 0;
    const file = await uploadFile(Buffer.from('hello from the sdk\n'), { ...sdk(), fileName: 'hello.txt', contentType: 'text/plain', store: true, metadata: { origin: 'sdk' } });
    expect(file.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(file.cdnUrl).toBe(`${srv.cdn}/${file.uuid}/`);
    expect(proxy.paths).toContain('POST /base/');
    const i = await info(file.uuid);
    expect(i).toMatchObject({ uuid: file.uuid, size: 19, original_filename: 'hello.txt', is_stored: true, is_ready: true, metadata: { origin: 'sdk' } });
    expect((await cdnBytes(file.uuid)).toString()).toBe('hello from the sdk\n');
  });

  it('uploads a 30 MB Buffer through multipart with concurrent part PUTs', async () => {
    proxy.paths.length = 0;
    proxy.maxConcurrentPuts = 0;
    const data = bytes(30 * 1024 * 1024, 11);
    const file = await uploadFile(data, { ...sdk(), fileName: 'thirty.bin', contentType: 'application/octet-stream', store: false, maxConcurrentRequests: 4 });
    expect(proxy.paths).toContain('POST /multipart/start/');
    expect(proxy.paths).toContain('POST /multipart/complete/');
    expect(proxy.paths).not.toContain('POST /base/');
    // With object storage (STOWAGE_TEST_S3) the parts go straight to the bucket, past this proxy.
    expect(proxy.paths.filter((p) => p.startsWith('PUT /multipart/upload/'))).toHaveLength(usingS3() ? 0 : 6);
    if (!usingS3()) expect(proxy.maxConcurrentPuts).toBeGreaterThan(1);
    const i = await info(file.uuid);
    expect(i).toMatchObject({ size: data.length, original_filename: 'thirty.bin', is_stored: false });
    const got = await cdnBytes(file.uuid);
    expect(crypto.createHash('md5').update(got).digest('hex')).toBe(crypto.createHash('md5').update(data).digest('hex'));
  });

  it('uploads from a URL served by the test (/from_url/ + status polling)', async () => {
    proxy.paths.length = 0;
    const file = await uploadFile(`${originUrl}/files/report.bin`, { ...sdk(), store: 'auto', metadata: { via: 'url' } });
    expect(proxy.paths).toContain('POST /from_url/');
    expect(proxy.paths).toContain('GET /from_url/status/');
    const i = await info(file.uuid);
    expect(i).toMatchObject({ size: served.length, original_filename: 'report.bin', is_ready: true, metadata: { via: 'url' } });
    expect((await cdnBytes(file.uuid)).equals(served)).toBe(true);
  });

  it('surfaces a download failure as the SDK error', async () => {
    await expect(uploadFile(`${originUrl}/missing`, { ...sdk() })).rejects.toThrow(/HTTP client error: 404/);
  });
});
