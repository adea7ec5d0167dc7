/**
 * Multipart uploads with object storage: /multipart/start/ hands out presigned S3 part URLs, the
 * parts go straight to the bucket, /multipart/complete/ checks the sizes (ListParts) and completes
 * the S3 upload; unfinished uploads are aborted at expiry. Runs in every configuration (the servers
 * here always use an S3 endpoint, s3rver).
 */
import crypto from 'node:crypto';
import { GetObjectCommand, ListPartsCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, testS3, type ProjectKeys, type TestServer } from '../helpers/server.js';
import type { TestS3 } from '../helpers/s3.js';
import { eventually } from '../webhooks/receiver.js';

const MB = 1024 * 1024;
let s3: TestS3;
let server: TestServer;
let short: TestServer;
let keys: ProjectKeys;
let shortKeys: ProjectKeys;

// useServer() does not fit: two servers, each on a bucket of its own.
async function startOn(env: Record<string, string> = {}): Promise<TestServer> {
  const bucket = await s3.createBucket();
  return startServer({ bucket, env: { ...s3.env(bucket), ...env } });
}

beforeAll(async () => {
  s3 = await testS3();
  server = await startOn();
  short = await startOn({ STOWAGE_MULTIPART_TTL_MS: '3000', STOWAGE_JOB_POLL_MS: '100' });
  keys = await server.createProject();
  shortKeys = await short.createProject();
});
afterAll(async () => {
  await Promise.all([server?.stop(), short?.stop()]);
});

async function start(s: TestServer, pub: string, size: number, partSize = 5 * MB): Promise<{ uuid: string; parts: string[] }> {
  const r = await fetch(`${s.upload}/multipart/start/`, {
    method: 'POST',
    body: new URLSearchParams({ UPLOADCARE_PUB_KEY: pub, filename: 'big.bin', size: String(size), content_type: 'application/octet-stream', part_size: String(partSize), UPLOADCARE_STORE: '1' }),
  });
  expect(r.status).toBe(200);
  return (await r.json()) as { uuid: string; parts: string[] };
}

async function put(url: string, body: Buffer): Promise<void> {
  const r = await fetch(url, { method: 'PUT', body, headers: { 'content-type': 'application/octet-stream' } });
  expect(r.status).toBe(200);
}

async function complete(s: TestServer, pub: string, uuid: string): Promise<{ status: number; text: string }> {
  const r = await fetch(`${s.upload}/multipart/complete/`, { method: 'POST', body: new URLSearchParams({ UPLOADCARE_PUB_KEY: pub, uuid }) });
  return { status: r.status, text: await r.text() };
}

describe('multipart straight to the bucket', () => {
  it('hands out presigned part URLs on the bucket and completes the S3 upload', async () => {
    const data = crypto.randomBytes(11 * MB + 5);
    const s = await start(server, keys.public_key, data.length);
    expect(s.parts).toHaveLength(3);
    for (const u of s.parts) {
      const url = new URL(u);
      expect(url.origin).toBe(s3.endpoint);
      expect(url.pathname).toBe(`/${server.bucket}/files/${s.uuid.slice(0, 2)}/${s.uuid}`);
      expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    }
    // The node does not take parts itself.
    expect((await fetch(`${server.upload}/multipart/upload/${s.uuid}/1/`, { method: 'PUT', body: 'x' })).status).toBe(404);
    await Promise.all([2, 0, 1].map((i) => put(s.parts[i] as string, data.subarray(i * 5 * MB, (i + 1) * 5 * MB))));
    const done = await complete(server, keys.public_key, s.uuid);
    expect(done.status).toBe(200);
    expect(JSON.parse(done.text)).toMatchObject({ uuid: s.uuid, size: data.length, is_stored: true, filename: 'big.bin' });
    const got = await fetch(`${server.cdn}/${s.uuid}/`);
    expect(Buffer.from(await got.arrayBuffer()).equals(data)).toBe(true);
    expect(got.headers.get('etag')).toBe(`"${crypto.createHash('md5').update(data).digest('hex')}"`);
    // Completing again is the usual error.
    expect(await complete(server, keys.public_key, s.uuid)).toMatchObject({ status: 400, text: 'File is already uploaded.' });
  });

  it('refuses a completion with a missing part, and completes once it is there', async () => {
    const data = crypto.randomBytes(10 * MB + 100);
    const s = await start(server, keys.public_key, data.length);
    await put(s.parts[0] as string, data.subarray(0, 5 * MB));
    await put(s.parts[2] as string, data.subarray(10 * MB));
    expect(await complete(server, keys.public_key, s.uuid)).toEqual({ status: 400, text: 'File size mismatch. Not all parts uploaded?' });
    await put(s.parts[1] as string, data.subarray(5 * MB, 10 * MB));
    const done = await complete(server, keys.public_key, s.uuid);
    expect(done.status).toBe(200);
    expect(Buffer.from(await (await fetch(`${server.cdn}/${s.uuid}/`)).arrayBuffer()).equals(data)).toBe(true);
  });

  it('refuses misplaced and oversized parts', async () => {
    const size = 10 * MB + 100;
    const s = await start(server, keys.public_key, size);
    await put(s.parts[0] as string, crypto.randomBytes(5 * MB));
    await put(s.parts[1] as string, crypto.randomBytes(5 * MB - 10));
    await put(s.parts[2] as string, crypto.randomBytes(110));
    expect(await complete(server, keys.public_key, s.uuid)).toEqual({ status: 400, text: 'Can not complete upload. Wrong parts size?' });
    await put(s.parts[2] as string, crypto.randomBytes(200));
    expect(await complete(server, keys.public_key, s.uuid)).toEqual({ status: 400, text: 'Uploaded size is more than expected.' });
  });

  it('aborts the S3 upload of an unfinished multipart upload at expiry', async () => {
    const s = await start(short, shortKeys.public_key, 10 * MB + 1);
    await put(s.parts[0] as string, crypto.randomBytes(5 * MB));
    const key = `files/${s.uuid.slice(0, 2)}/${s.uuid}`;
    const uploadId = new URL(s.parts[0] as string).searchParams.get('uploadId') as string;
    const parts = () => s3.client.send(new ListPartsCommand({ Bucket: short.bucket, Key: key, UploadId: uploadId }));
    expect((await parts()).Parts).toHaveLength(1);
    await eventually(async () => parts().then(() => false, () => true), 30_000, 'the S3 upload aborted');
    // Its bookkeeping object is gone too, and the upload is unknown to the API.
    await expect(s3.client.send(new GetObjectCommand({ Bucket: short.bucket, Key: `multipart/${s.uuid.slice(0, 2)}/${s.uuid}/upload-id` }))).rejects.toThrow();
    expect(await complete(short, shortKeys.public_key, s.uuid)).toEqual({ status: 404, text: 'File is not found.' });
  });
});
