/**
 * The from_url fetch is a durable job: kill -9 the server in the middle of a slow download, start a
 * new process on the same data dir / schema, and the same token ends in success.
 */
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type ProjectKeys, type TestServer } from '../helpers/server.js';
import { bytes, get, postQuery, until } from './helpers.js';
import { startOrigin, type Origin } from './origin.js';

const payload = bytes(1_000_000, 21);
const ENV = { STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8', STOWAGE_FROM_URL_LEASE_MS: '2000' };
let first: TestServer;
let second: TestServer | undefined;
let keys: ProjectKeys;
let origin: Origin;

/** First request: a quarter of the body, then silence (the node dies meanwhile). Later ones: all of it. */
function slow(req: http.IncomingMessage, res: http.ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(payload.length) });
  if ((origin.hits.get('/slow') ?? 0) === 1) {
    res.write(payload.subarray(0, payload.length / 4));
    req.socket.on('close', () => res.destroy());
    return;
  }
  res.end(payload);
}

// useServer() does not fit: the first server is killed with SIGKILL and a second one restarts on
// its data dir.
beforeAll(async () => {
  origin = await startOrigin(payload, { '/slow': slow });
  first = await startServer({ env: ENV });
  keys = await first.createProject();
});
afterAll(async () => {
  await first?.stop();
  await second?.stop();
  origin?.close();
});

describe('from_url across a crash', () => {
  it('finishes the fetch in the next process after kill -9', async () => {
    const started = await postQuery(`${first.upload}/from_url/`, { pub_key: keys.public_key, source_url: `${origin.url}/slow`, filename: 'survivor.bin' });
    const token = started.json.token as string;
    await until(async () => {
      const r = await get(`${first.upload}/from_url/status/?token=${token}`);
      return r.json.status === 'progress' && r.json.done > 0 ? r : undefined;
    });
    await first.kill();
    expect(first.child.signalCode).toBe('SIGKILL');

    second = await startServer({ env: ENV, dataDir: first.dataDir, ...(first.schema ? { schema: first.schema } : {}) });
    const done = await until(async () => {
      const r = await get(`${second!.upload}/from_url/status/?token=${token}`);
      return r.json.status === 'success' || r.json.status === 'error' ? r : undefined;
    }, 45_000);
    expect(done.json).toMatchObject({ status: 'success', size: payload.length, original_filename: 'survivor.bin' });
    expect(origin.hits.get('/slow')).toBe(2);
    const cdn = await fetch(`${second.cdn}/${done.json.uuid}/`);
    expect(Buffer.from(await cdn.arrayBuffer()).equals(payload)).toBe(true);
  });
});
