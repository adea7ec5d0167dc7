import crypto from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { rssBytes, startServer, type TestServer } from '../helpers/server.js';
import { restClient, uploadBase } from '../helpers/rest.js';

// useServer() does not fit: servers are killed (SIGKILL) and restarted on their data dir, per test.
let servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  servers = [];
});

const newBoundary = () => `----stowage${crypto.randomBytes(8).toString('hex')}`;

/** A /base/ form up to the file's first byte: the public key, `fields`, then the file part's head. */
function formHead(boundary: string, pubKey: string, filename: string, fields: Record<string, string>): Buffer {
  const field = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const all = field('UPLOADCARE_PUB_KEY', pubKey) + Object.entries(fields).map(([k, v]) => field(k, v)).join('');
  return Buffer.from(`${all}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`);
}

/**
 * A stored /base/ upload whose body stops half-way until `release` resolves, then fails: it is in
 * flight whenever the server is killed, however fast the server took every other upload.
 */
function stalledUpload(base: string, pubKey: string, data: Buffer, release: Promise<void>): Promise<Response> {
  const boundary = newBoundary();
  let started = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(Buffer.concat([formHead(boundary, pubKey, 'stalled.bin', { UPLOADCARE_STORE: '1' }), data.subarray(0, data.length >> 1)]));
        return;
      }
      await release;
      controller.error(new Error('stalled upload abandoned'));
    },
  });
  return fetch(`${base}/base/`, { method: 'POST', body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, duplex: 'half' } as RequestInit);
}

/** A multipart body of `total` bytes generated on the fly: the test holds one chunk at a time. */
function streamingMultipart(pubKey: string, total: number): { body: ReadableStream<Uint8Array>; contentType: string; md5: () => string } {
  const boundary = newBoundary();
  const head = formHead(boundary, pubKey, 'big.bin', {});
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = crypto.randomBytes(1024 * 1024);
  const hash = crypto.createHash('md5');
  let sent = 0;
  let stage: 'head' | 'body' | 'tail' | 'done' = 'head';
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (stage === 'head') {
        controller.enqueue(head);
        stage = 'body';
      } else if (stage === 'body') {
        const n = Math.min(chunk.length, total - sent);
        const piece = chunk.subarray(0, n);
        hash.update(piece);
        controller.enqueue(piece);
        sent += n;
        if (sent >= total) stage = 'tail';
      } else if (stage === 'tail') {
        controller.enqueue(tail);
        stage = 'done';
      } else controller.close();
    },
  });
  return { body, contentType: `multipart/form-data; boundary=${boundary}`, md5: () => hash.digest('hex') };
}

describe('durability', () => {
  it('streams a 1 GB upload with bounded server memory, and serves it back intact', async () => {
    const server = await startServer();
    servers.push(server);
    const keys = await server.createProject();
    const pid = server.child.pid as number;
    const baseline = rssBytes(pid);
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 100);
    const size = 1024 * 1024 * 1024;
    const mp = streamingMultipart(keys.public_key, size);
    const res = await fetch(`${server.upload}/base/`, { method: 'POST', body: mp.body, headers: { 'content-type': mp.contentType }, duplex: 'half' } as RequestInit);
    clearInterval(sampler);
    expect(res.status).toBe(200);
    const { file } = (await res.json()) as { file: string };
    // Memory must not follow the file size: a fraction of it at most.
    expect(peak - baseline).toBeLessThan(200 * 1024 * 1024);
    const head = await fetch(`${server.cdn}/${file}/`, { method: 'HEAD' });
    expect(head.headers.get('content-length')).toBe(String(size));
    expect(head.headers.get('etag')).toBe(`"${mp.md5()}"`);
    // Download it through the CDN, also with bounded memory on both sides.
    peak = rssBytes(pid);
    const before = peak;
    const dl = await fetch(`${server.cdn}/${file}/`);
    const hash = crypto.createHash('md5');
    const sampler2 = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 100);
    for await (const part of dl.body as unknown as AsyncIterable<Uint8Array>) hash.update(part);
    clearInterval(sampler2);
    expect(`"${hash.digest('hex')}"`).toBe(head.headers.get('etag'));
    expect(peak - before).toBeLessThan(200 * 1024 * 1024);
  }, 300_000);

  it('a server killed with SIGKILL during many uploads leaves no row without its bytes', async () => {
    const server = await startServer();
    const keys = await server.createProject();
    const acknowledged = new Map<string, string>();
    const payloads: Buffer[] = Array.from({ length: 400 }, (_, i) => crypto.randomBytes(50_000 + i * 997));
    let killed = false;
    // The last few stall half-way until the kill: under load the server once took all 400 before
    // this test's loop saw 40 of them answered (CI, 28 Nov 2026), and nothing was in flight.
    const STALLED = 8;
    let releaseStalled = (): void => undefined;
    const stalledUntilKilled = new Promise<void>((resolve) => (releaseStalled = resolve));
    const uploads = payloads.map(async (data, i) => {
      try {
        if (i >= payloads.length - STALLED) {
          await stalledUpload(server.upload, keys.public_key, data, stalledUntilKilled);
          return;
        }
        const r = await uploadBase(server.upload, keys.public_key, [{ name: `f${i}.bin`, data }], { UPLOADCARE_STORE: '1' });
        if (r.status === 200 && !killed) acknowledged.set(r.json.file, crypto.createHash('md5').update(data).digest('hex'));
      } catch {
        // Connection reset by the kill.
      }
    });
    // Kill once a good share has been acknowledged, with many still in flight.
    while (acknowledged.size < 40) await new Promise((r) => setTimeout(r, 5));
    await server.kill();
    killed = true;
    releaseStalled();
    await Promise.all(uploads);
    expect(acknowledged.size).toBeLessThan(payloads.length);

    const restarted = await startServer({ dataDir: server.dataDir, ...(server.schema ? { schema: server.schema } : {}) });
    servers.push(restarted);
    const call = restClient(restarted.rest, keys);
    const rows: Array<{ uuid: string; size: number }> = [];
    let url: string | null = '/files/?limit=1000';
    while (url) {
      const r = await call('GET', url);
      rows.push(...r.json.results);
      url = r.json.next ? new URL(r.json.next).pathname + new URL(r.json.next).search : null;
    }
    // Every acknowledged upload survived...
    const byUuid = new Map(rows.map((r) => [r.uuid, r]));
    for (const uuid of acknowledged.keys()) expect(byUuid.has(uuid)).toBe(true);
    // ...and every row, acknowledged or not, has all of its bytes.
    for (const row of rows) {
      const r = await fetch(`${restarted.cdn}/${row.uuid}/`);
      expect(r.status).toBe(200);
      const body = Buffer.from(await r.arrayBuffer());
      expect(body.length).toBe(row.size);
      const md5 = crypto.createHash('md5').update(body).digest('hex');
      expect(r.headers.get('etag')).toBe(`"${md5}"`);
      const expected = acknowledged.get(row.uuid);
      if (expected) expect(md5).toBe(expected);
    }
  }, 180_000);
});
