/**
 * POST /files/remote_copy/ into an S3-compatible endpoint started here (s3rver on 127.0.0.1), with
 * custom storages added through the admin CLI. Checks object bytes and keys per pattern.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startServer, type TestServer } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { restClient } from '../helpers/rest.js';
import { png, randomBytes, upload } from '../groups/helpers.js';

let s3: { run(): Promise<AddressInfo>; close(): Promise<void> };
let endpoint: string;
let s3client: S3Client;

function addStorage(target: TestServer, pub: string, name: string, bucket: string, extra: string[] = []): string {
  return target.cli(['storage', 'add', '--pub-key', pub, '--name', name, '--bucket', bucket, '--endpoint', endpoint, '--region', 'us-east-1', '--access-key-id', 'S3RVER', '--secret-access-key', 'S3RVER', '--force-path-style', ...extra]);
}

async function object(bucket: string, key: string): Promise<Buffer | null> {
  try {
    const r = await s3client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return Buffer.from(await r.Body!.transformToByteArray());
  } catch (err) {
    if ((err as { name?: string }).name === 'NoSuchKey') return null;
    throw err;
  }
}

beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 's3rver-'));
  s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: 'dest' }, { name: 'other' }] });
  const addr = await s3.run();
  endpoint = `http://127.0.0.1:${addr.port}`;
  s3client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
}, 180_000);
const srv = useServer({ env: { STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8' } });
beforeAll(async () => {
  addStorage(srv.server, srv.keys.public_key, 'main', 'dest');
  addStorage(srv.server, srv.keys.public_key, 'patterned', 'other', ['--pattern', 'custom/${uuid}${ext}']);
}, 180_000);
afterAll(async () => {
  s3client?.destroy();
  await s3?.close();
});

const remote = (body: unknown) => srv.call('POST', '/files/remote_copy/', { body: JSON.stringify(body) });

// Tests that run the admin CLI start extra node processes: generous timeouts on a loaded machine.
describe('remote copy', { timeout: 180_000 }, () => {
  it('writes the original under ${default} = ${uuid}/${filename}${ext}; 200 when it already exists', async () => {
    const data = randomBytes(150_000);
    const src = await upload(srv.server, srv.keys, 'My Data.bin', data);
    const r = await remote({ source: src, target: 'main' });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toEqual({ type: 'url', result: `s3://dest/${src}/MyData.bin` });
    expect((await object('dest', `${src}/MyData.bin`))?.equals(data)).toBe(true);
    const again = await remote({ source: src, target: 'main', make_public: false });
    expect(again.status).toBe(200);
    expect(again.json).toEqual({ type: 'url', result: `s3://dest/${src}/MyData.bin` });
  });

  it('expands every pattern variable, with effects and the output extension for processed sources', async () => {
    const src = await upload(srv.server, srv.keys, 'photo.png', await png(400, 200), 'image/png');
    const cases: Array<[string, string]> = [
      ['${uuid}', src],
      ['${filename}', 'photo'],
      ['${ext}', '.png'],
      ['x/${auto_filename}', 'x/photo.png'],
      ['${default}', `${src}/photo.png`],
      ['a-${uuid}-${filename}${ext}', `a-${src}-photo.png`],
    ];
    for (const [pattern, key] of cases) {
      const r = await remote({ source: src, target: 'main', pattern, make_public: true });
      expect([r.status, r.json], pattern).toEqual([201, { type: 'url', result: `s3://dest/${key}` }]);
      expect((await object('dest', key))?.length).toBeGreaterThan(0);
    }
    const processed = await remote({ source: `${srv.cdn}/${src}/-/resize/100x/-/format/jpeg/`, target: 'main', pattern: 'p/${auto_filename}' });
    expect(processed.status, processed.text).toBe(201);
    const key = 'p/photo/-/resize/100x/-/format/jpeg.jpg';
    expect(processed.json.result).toBe(`s3://dest/${key}`);
    const m = await sharp((await object('dest', key))!).metadata();
    expect([m.width, m.height, m.format]).toEqual([100, 50, 'jpeg']);
    const effects = await remote({ source: `${src}/-/resize/50x/`, target: 'main', pattern: 'e${effects}' });
    expect(effects.json.result).toBe('s3://dest/e/-/resize/50x');
  });

  it("uses the storage's own pattern when none is given", async () => {
    const src = await upload(srv.server, srv.keys, 'n.txt', 'note');
    const r = await remote({ source: src, target: 'patterned' });
    expect(r.json).toEqual({ type: 'url', result: `s3://other/custom/${src}.txt` });
    expect((await object('other', `custom/${src}.txt`))?.toString()).toBe('note');
  });

  it('refuses every bad request with the wire texts', async () => {
    const src = await upload(srv.server, srv.keys, 'a.txt', 'aaa');
    const other = await srv.server.createProject();
    addStorage(srv.server, other.public_key, 'theirs', 'dest');
    const cases: Array<[unknown, string]> = [
      [{ target: 'main' }, '`source` parameter is required.'],
      [{ source: 'junk', target: 'main' }, 'Bad `source` parameter. Use UUID or CDN URL.'],
      [{ source: src }, '`target` parameter is required.'],
      [{ source: src, target: 'nope' }, 'Project has no storage with provided name.'],
      [{ source: src, target: 'theirs' }, 'Project has no storage with provided name.'],
      [{ source: src, target: 'main', pattern: '${nope}' }, 'Invalid pattern provided: `${nope}`'],
      [{ source: src, target: 'main', pattern: '${uuid' }, 'Invalid pattern provided: `${uuid`'],
      [{ source: src, target: 'main', pattern: '' }, 'Invalid pattern provided: ``'],
      [{ source: src, target: 'main', make_public: 'perhaps' }, '`make_public` parameter should be `true` or `false`.'],
    ];
    for (const [body, detail] of cases) {
      const r = await remote(body);
      expect([r.status, r.json], JSON.stringify(body)).toEqual([400, { detail }]);
    }
  });

  it('lists storages without secrets and removes them', async () => {
    const list = JSON.parse(srv.server.cli(['storage', 'list', '--pub-key', srv.keys.public_key, '--json']));
    expect(list.map((s: { name: string }) => s.name)).toEqual(['main', 'patterned']);
    expect(JSON.stringify(list)).not.toContain('secret');
    const p = await srv.server.createProject();
    addStorage(srv.server, p.public_key, 'gone', 'dest');
    srv.server.cli(['storage', 'remove', '--pub-key', p.public_key, '--name', 'gone']);
    const src = await upload(srv.server, p, 'a.txt', 'a');
    const r = await restClient(srv.rest, p)('POST', '/files/remote_copy/', { body: JSON.stringify({ source: src, target: 'gone' }) });
    expect(r.json).toEqual({ detail: 'Project has no storage with provided name.' });
  });
});

describe('outbound policy', { timeout: 180_000 }, () => {
  it('refuses a storage on loopback unless the network is allowlisted', async () => {
    const strict = await startServer();
    try {
      const k = await strict.createProject();
      addStorage(strict, k.public_key, 'local', 'dest');
      const src = await upload(strict, k, 'a.txt', 'a');
      const r = await restClient(strict.rest, k)('POST', '/files/remote_copy/', { body: JSON.stringify({ source: src, target: 'local', pattern: 'strict/${uuid}' }) });
      expect(r.status).toBe(400);
      expect(r.json.detail).toMatch(/outbound policy/);
      expect(await object('dest', `strict/${src}`)).toBeNull();
    } finally {
      await strict.stop();
    }
  });
});
