/**
 * A full disk, for real: the server's data dir is a small tmpfs. Uploads, multipart parts and
 * copies that do not fit answer 507 with a clear message in each surface's format
 * (never `500 Internal error.`), leave no temporary files behind, readiness reports the low disk,
 * and everything works again once space is freed (a refused multipart part can be sent again).
 *
 * Mounting needs root; with blobs in S3 the bytes do not land on the data dir at all.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startServer, usingS3, type ProjectKeys, type TestServer } from '../helpers/server.js';
import { restClient } from '../helpers/rest.js';
import { readResponse } from '../helpers/http.js';
import { get, postForm, postQuery, until } from '../uploads/helpers.js';
import { startOrigin, type Origin } from '../uploads/origin.js';

const MiB = 1024 * 1024;
const TMPFS_BYTES = 48 * MiB;

function tryMountTmpfs(dir: string, bytes: number): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function whyNot(): string | null {
  if (usingS3()) return 'blobs live in the S3 bucket, not on the data dir';
  if (process.getuid?.() !== 0) return 'mounting a small tmpfs needs root';
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-tmpfs-probe-'));
  const ok = tryMountTmpfs(probe, MiB);
  if (ok) execFileSync('umount', [probe]);
  fs.rmdirSync(probe);
  return ok ? null : 'this machine does not allow mounting a tmpfs';
}

const skipReason = whyNot();

let dataDir: string;
let server: TestServer;
let keys: ProjectKeys;
let origin: Origin;

const freeBytes = () => {
  const s = fs.statfsSync(dataDir);
  return s.bavail * s.bsize;
};
const tempFiles = () => fs.readdirSync(path.join(dataDir, 'blobs', '.tmp'));

/** Requests the surfaces answered with a 500 (what a full disk used to give). */
const handlerFailures = () => server.output().split('\n').filter((l) => /handler failed|request failed/.test(l));

async function uploadBase(data: Buffer, query = ''): Promise<Response> {
  const form = new FormData();
  form.set('UPLOADCARE_PUB_KEY', keys.public_key);
  form.set('UPLOADCARE_STORE', '1');
  form.set('file', new Blob([data]), 'f.bin');
  return fetch(`${server.upload}/base/${query}`, { method: 'POST', body: form });
}

describe.skipIf(skipReason !== null)(`full disk (tmpfs data dir)${skipReason ? ` — skipped: ${skipReason}` : ''}`, () => {
  // useServer() does not fit: the data dir is a tmpfs mounted before the start and unmounted only
  // after the stop.
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-full-'));
    if (!tryMountTmpfs(dataDir, TMPFS_BYTES)) throw new Error('could not mount the tmpfs');
    server = await startServer({ dataDir, env: { STOWAGE_MIN_FREE_BYTES: String(4 * MiB), STOWAGE_LOG_LEVEL: 'info', STOWAGE_OUTBOUND_ALLOW: '127.0.0.1/32' } });
    keys = await server.createProject();
    origin = await startOrigin(crypto.randomBytes(4 * MiB));
  });
  afterAll(async () => {
    origin?.close();
    await server?.stop();
    if (dataDir) {
      execFileSync('umount', [dataDir]);
      fs.rmdirSync(dataDir);
    }
  });

  let small: { uuid: string; data: Buffer };

  it('an upload larger than the free space answers 507 (plain and jsonerrors), leaving no temp file', async () => {
    const data = crypto.randomBytes(3 * MiB);
    const ok = await uploadBase(data);
    expect(ok.status).toBe(200);
    small = { uuid: ((await ok.json()) as { file: string }).file, data };

    const before = freeBytes();
    const big = crypto.randomBytes(64 * MiB);
    const plain = await uploadBase(big);
    expect(plain.status).toBe(507);
    expect(plain.headers.get('retry-after')).toBe('60');
    // The warning names the request by the id its answer carries, so a client's report finds it.
    const reqId = plain.headers.get('x-request-id');
    expect(reqId).toBeTruthy();
    // (The log line travels through a pipe, the answer through a socket: either may arrive first.)
    const warned = () => server.output().split('\n').some((l) => l.includes('out of storage space') && l.includes(`"reqId":"${reqId}"`));
    await vi.waitFor(() => expect(warned(), server.output()).toBe(true), { timeout: 5_000, interval: 25 });
    expect(await plain.text()).toBe('Insufficient storage: the server has no space left to store this. Try again later.');
    const sdk = await readResponse(await uploadBase(big, '?jsonerrors=1'));
    expect(sdk.status).toBe(200);
    expect(sdk.json).toEqual({ error: { status_code: 507, error_code: 'InsufficientStorageError', content: 'Insufficient storage: the server has no space left to store this. Try again later.' } });
    expect(tempFiles()).toEqual([]);
    // The partial bytes are gone, not just unlinked while still held open. The 507 may go out
    // while the writer's descriptor is still being closed (an async close on the thread pool),
    // so the space is waited for, briefly: a descriptor never closed keeps it taken for good.
    await vi.waitFor(() => expect(freeBytes()).toBeGreaterThanOrEqual(before - MiB), { timeout: 5_000, interval: 25 });
    expect(handlerFailures(), server.output()).toEqual([]);
  });

  let multipart: { uuid: string; parts: string[]; data: Buffer };

  it('with the disk full: multipart parts and REST copies answer 507; readiness reports the low disk', async () => {
    const size = 10 * MiB;
    const start = await postForm(`${server.upload}/multipart/start/`, { UPLOADCARE_PUB_KEY: keys.public_key, filename: 'big.bin', content_type: 'application/octet-stream', size: String(size) });
    expect(start.status).toBe(200);
    multipart = { uuid: start.json.uuid, parts: start.json.parts, data: crypto.randomBytes(size) };
    const partBody = (i: number) => multipart.data.subarray(i * 5 * MiB, (i + 1) * 5 * MiB);
    // All parts but the last (the last one is sent once the disk is full).
    for (const [i, url] of multipart.parts.slice(0, -1).entries()) {
      const r = await fetch(url, { method: 'PUT', body: partBody(i) });
      expect(r.status).toBe(200);
    }
    expect((await fetch(`${server.rest}/readyz`)).status).toBe(200);

    // Leave about 2 MiB: less than a part or a copy of the small file, and
    // room for SQLite's journal (the metadata store lives in the data dir too).
    fs.writeFileSync(path.join(dataDir, 'filler'), Buffer.alloc(freeBytes() - 2 * MiB));

    const copy = await restClient(server.rest, keys)('POST', '/files/local_copy/', { body: JSON.stringify({ source: small.uuid, store: true }) });
    expect(copy.status).toBe(507);
    expect(copy.json).toEqual({ detail: 'Insufficient storage: the server has no space left to store this. Try again later.' });

    // from_url retries a full disk with backoff (space may come back), then says why it gave up.
    const token = (await postQuery(`${server.upload}/from_url/`, { pub_key: keys.public_key, source_url: `${origin.url}/plain/data.bin` })).json.token as string;
    const failed = await until(async () => {
      // A pooled connection reset under load is the poll's problem, not the answer: poll again.
      const r = await get(`${server.upload}/from_url/status/?token=${token}&jsonerrors=1`).catch(() => null);
      return r?.json.status === 'error' ? r.json : undefined;
    }, 120_000);
    expect(failed).toMatchObject({ error_code: 'InsufficientStorageError', error: 'Insufficient storage: the server has no space left to store this. Try again later.' });

    const ready = await fetch(`${server.upload}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'unavailable', disk: 'low' });

    // A part needs new space: 507. Last here: the bytes the refused part did write stay allocated
    // in the upload's file (parts are written in place) until it is sent again, so the disk is
    // then full to the last byte. (On disk a completion writes no bytes: not a case here.)
    const last = multipart.parts.length - 1;
    const part = await fetch(multipart.parts[last] as string, { method: 'PUT', body: partBody(last) });
    expect(part.status).toBe(507);
    expect(tempFiles()).toEqual([]);
    expect(handlerFailures(), server.output()).toEqual([]);
    expect(server.output()).toContain('out of storage space');
    // The from_url job backs off between its five attempts (about 15 s idle, longer under load).
  }, 180_000);

  it('once space is freed: ready again, the part can be sent again and the upload completed, and every acknowledged byte is intact', async () => {
    fs.rmSync(path.join(dataDir, 'filler'));
    expect((await fetch(`${server.cdn}/readyz`)).status).toBe(200);
    const last = multipart.parts.length - 1;
    const part = await fetch(multipart.parts[last] as string, { method: 'PUT', body: multipart.data.subarray(last * 5 * MiB) });
    expect(part.status).toBe(200);
    const complete = await postForm(`${server.upload}/multipart/complete/`, { UPLOADCARE_PUB_KEY: keys.public_key, uuid: multipart.uuid });
    expect(complete.status).toBe(200);
    expect(complete.json.size).toBe(multipart.data.length);
    for (const [uuid, data] of [
      [multipart.uuid, multipart.data],
      [small.uuid, small.data],
    ] as const) {
      const r = await fetch(`${server.cdn}/${uuid}/`);
      expect(r.status).toBe(200);
      expect(Buffer.from(await r.arrayBuffer()).equals(data)).toBe(true);
    }
    const copy = await restClient(server.rest, keys)('POST', '/files/local_copy/', { body: JSON.stringify({ source: small.uuid, store: true }) });
    expect(copy.status).toBe(201);
  });
});
