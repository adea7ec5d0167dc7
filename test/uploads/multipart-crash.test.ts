/**
 * A node killed (SIGKILL) in the middle of /multipart/complete/ must not leave the upload stuck
 * behind "File is already uploaded." with no file: the completion's claim is a lease that a retry
 * takes over once it lapses (503 with Retry-After until then), and the retry finishes the upload
 * with every byte intact. (Two completions at once: test/uploads/multipart.test.ts.)
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer, type ProjectKeys, type TestServer } from '../helpers/server.js';
import type { Res } from '../helpers/http.js';
import { storeRows } from '../helpers/store-query.js';
import { postForm, sleep } from './helpers.js';

const MiB = 1024 * 1024;
const PART = 5 * MiB;
const LEASE_MS = 2000;
const servers: TestServer[] = [];

afterAll(async () => {
  for (const s of servers) await s.stop();
});

async function start(opts: Parameters<typeof startServer>[0] = {}): Promise<TestServer> {
  // useServer() does not fit: a node is killed (SIGKILL) mid-completion and another takes over.
  const s = await startServer({ ...opts, env: { STOWAGE_MULTIPART_CLAIM_LEASE_MS: String(LEASE_MS), STOWAGE_DIGEST_LATER_BYTES: '0', ...opts.env } });
  servers.push(s);
  return s;
}

/** Starts a multipart upload of `data` and PUTs every part. */
async function uploadParts(server: TestServer, keys: ProjectKeys, data: Buffer): Promise<{ uuid: string; urls: string[] }> {
  const r = await postForm(`${server.upload}/multipart/start/`, {
    UPLOADCARE_PUB_KEY: keys.public_key,
    filename: 'big.bin',
    content_type: 'application/octet-stream',
    size: String(data.length),
    UPLOADCARE_STORE: '1',
  });
  expect(r.status).toBe(200);
  const urls = r.json.parts as string[];
  for (let i = 0; i < urls.length; i += 4) {
    await Promise.all(
      urls.slice(i, i + 4).map(async (url, j) => {
        const n = i + j;
        const put = await fetch(url, { method: 'PUT', body: data.subarray(n * PART, (n + 1) * PART) });
        expect(put.status).toBe(200);
      }),
    );
  }
  return { uuid: r.json.uuid as string, urls };
}

const complete = (server: TestServer, keys: ProjectKeys, uuid: string): Promise<Res> =>
  postForm(`${server.upload}/multipart/complete/`, { UPLOADCARE_PUB_KEY: keys.public_key, uuid });

/**
 * Resolves with the server stopped (SIGSTOP) while its completion holds the claim, read from the
 * store as another process would; the kill follows. The server runs in steps of about a
 * millisecond and is stopped while each read runs: a whole completion can take less than one read
 * on PostgreSQL (the parts lie in one file and the digests are already known), and then it
 * finished between two reads.
 */
async function stoppedWhileClaimed(server: TestServer, uuid: string): Promise<void> {
  const pid = server.child.pid;
  if (pid === undefined) throw new Error('the server has no pid');
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    process.kill(pid, 'SIGSTOP');
    const [row] = await storeRows<{ state: string }>(server, 'SELECT state FROM multipart_uploads WHERE uuid = ?', [uuid]);
    if (row?.state === 'completing') return;
    if (row?.state !== 'open') throw new Error(`the upload is ${row?.state ?? 'gone'} before the kill`);
    process.kill(pid, 'SIGCONT');
    await sleep(1);
  }
  throw new Error('the completion never took its claim');
}

const md5 = (b: Buffer) => crypto.createHash('md5').update(b).digest('hex');

describe('multipart completion and crashes', () => {
  it('a retry after a SIGKILL during /multipart/complete/ finishes the upload (503 + Retry-After while the dead claim lasts)', async () => {
    const first = await start();
    const keys = await first.createProject();
    const data = crypto.randomBytes(40 * PART);
    const { uuid, urls } = await uploadParts(first, keys, data);

    const pending = complete(first, keys, uuid).catch(() => null);
    await stoppedWhileClaimed(first, uuid);
    await first.kill();
    expect(await pending).toBeNull();

    const restarted = await start({ dataDir: first.dataDir, ...(first.schema ? { schema: first.schema } : {}), ...(first.bucket ? { bucket: first.bucket } : {}) });
    if (!restarted.bucket) {
      // On disk a completion reads the parts where they lie: no part is rewritten while one holds
      // (or held) the upload, until a completion takes it over.
      const url = new URL(urls[0]!);
      const late = await fetch(`${restarted.upload}${url.pathname}${url.search}`, { method: 'PUT', body: data.subarray(0, PART) });
      expect([late.status, await late.text()]).toEqual([503, 'File is being assembled by another request. Try again later.']);
    }
    const seen: number[] = [];
    let done: Res | null = null;
    const deadline = Date.now() + LEASE_MS + 30_000;
    while (!done && Date.now() < deadline) {
      const r = await complete(restarted, keys, uuid);
      seen.push(r.status);
      if (r.status === 200) done = r;
      else {
        // Never "already uploaded" for a file that does not exist: only "try again later".
        expect(r.status, r.text).toBe(503);
        expect(r.text).toBe('File is being assembled by another request. Try again later.');
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(Number(r.headers.get('retry-after'))).toBeLessThanOrEqual(Math.ceil(LEASE_MS / 1000));
        await sleep(250);
      }
    }
    expect(done, `statuses: ${seen.join(',')}`).not.toBeNull();
    expect(done!.json.uuid).toBe(uuid);
    expect(done!.json.size).toBe(data.length);
    const body = Buffer.from(await (await fetch(`${restarted.cdn}/${uuid}/`)).arrayBuffer());
    expect(body.length).toBe(data.length);
    expect(md5(body)).toBe(md5(data));
    // Now it is uploaded, and says so.
    const again = await complete(restarted, keys, uuid);
    expect(again.status).toBe(400);
    expect(again.text).toBe('File is already uploaded.');
    // The parts are gone once the file is.
    const partsDir = path.join(restarted.dataDir, 'blobs', 'multipart', uuid.slice(0, 2), uuid);
    if (!restarted.bucket && fs.existsSync(partsDir)) expect(fs.readdirSync(partsDir)).toEqual([]);
  }, 180_000);
});
