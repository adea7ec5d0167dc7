/**
 * Graceful shutdown on SIGTERM: listeners stop accepting, an in-flight upload still completes and
 * is kept, a stalled one is cut after the grace period, and job leases are handed back so another
 * node resumes the work at once (the lease here is 10 minutes: without the release the test would
 * time out).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { get, postQuery, until } from '../uploads/helpers.js';
import { startOrigin, type Origin } from '../uploads/origin.js';

const started: TestServer[] = [];
let origin: Origin | undefined;

async function start(opts: Parameters<typeof startServer>[0] = {}): Promise<TestServer> {
  // useServer() does not fit: the tests stop servers themselves (SIGTERM) while requests run.
  const s = await startServer(opts);
  started.push(s);
  return s;
}
afterAll(async () => {
  for (const s of started) await s.stop();
  origin?.close();
});

const exited = (s: TestServer) => new Promise<number | null>((resolve) => (s.child.exitCode !== null ? resolve(s.child.exitCode) : s.child.once('exit', (code) => resolve(code))));

/** A /base/ upload whose body is sent in two halves; `finish()` sends the rest and reads the answer. */
function slowUpload(upload: string, pub: string, body: Buffer) {
  const boundary = `----stowage${crypto.randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="UPLOADCARE_PUB_KEY"\r\n\r\n${pub}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="UPLOADCARE_STORE"\r\n\r\n1\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="drain.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const url = new URL(`${upload}/base/`);
  const req = http.request(url, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + body.length + tail.length } });
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  answer.catch(() => undefined);
  const half = Math.floor(body.length / 2);
  req.write(Buffer.concat([head, body.subarray(0, half)]));
  return {
    answer,
    finish() {
      req.end(Buffer.concat([body.subarray(half), tail]));
      return answer;
    },
  };
}

/** Waits until the node reports a request in flight (the upload has reached a handler). */
async function untilInFlight(s: TestServer): Promise<void> {
  await until(async () => {
    const r = await get(`${s.rest}/readyz`);
    return r.json?.inFlight >= 1 ? true : undefined;
  });
}

describe('graceful shutdown', () => {
  it('finishes an in-flight upload after SIGTERM while refusing new connections', async () => {
    const a = await start();
    const keys = await a.createProject();
    const body = crypto.randomBytes(2 * 1024 * 1024);
    const up = slowUpload(a.upload, keys.public_key, body);
    await untilInFlight(a);
    const gone = exited(a);
    a.child.kill('SIGTERM');
    // The listeners close: a new connection is refused while the upload is still open.
    await until(async () => (await fetch(`${a.cdn}/healthz`).then(() => false, () => true)) || undefined);
    const res = await up.finish();
    expect(res.status).toBe(200);
    const uuid = (JSON.parse(res.text) as { file: string }).file;
    expect(await gone).toBe(0);

    const b = await start({ dataDir: a.dataDir, ...(a.schema ? { schema: a.schema } : {}), ...(a.bucket ? { bucket: a.bucket } : {}) });
    const cdn = await fetch(`${b.cdn}/${uuid}/`);
    expect(cdn.status).toBe(200);
    expect(Buffer.from(await cdn.arrayBuffer()).equals(body)).toBe(true);
  });

  it('cuts a stalled request after the grace period and still exits cleanly', async () => {
    const a = await start({ env: { STOWAGE_SHUTDOWN_GRACE_MS: '1500' } });
    const keys = await a.createProject();
    const up = slowUpload(a.upload, keys.public_key, crypto.randomBytes(1024 * 1024));
    await untilInFlight(a);
    const gone = exited(a);
    a.child.kill('SIGTERM');
    await expect(up.answer).rejects.toThrow();
    expect(await gone).toBe(0);
    expect(a.output()).toMatch(/grace period over/);
  });

  it('hands job leases back so another node resumes a running job at once', async () => {
    const payload = crypto.randomBytes(300_000);
    // First fetch: part of the body, then silence until the connection closes. Later: all of it.
    origin = await startOrigin(payload, {
      '/stall': (req, res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(payload.length) });
        if ((origin?.hits.get('/stall') ?? 0) === 1) {
          res.write(payload.subarray(0, 1000));
          req.socket.on('close', () => res.destroy());
          return;
        }
        res.end(payload);
      },
    });
    const env = { STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8', STOWAGE_FROM_URL_LEASE_MS: '600000', STOWAGE_SHUTDOWN_GRACE_MS: '1000' };
    const a = await start({ env });
    const keys = await a.createProject();
    const r = await postQuery(`${a.upload}/from_url/`, { pub_key: keys.public_key, source_url: `${origin.url}/stall`, filename: 'resumed.bin' });
    const token = r.json.token as string;
    await until(async () => ((await get(`${a.upload}/from_url/status/?token=${token}`)).json.status === 'progress' ? true : undefined));
    const gone = exited(a);
    a.child.kill('SIGTERM');
    expect(await gone).toBe(0);

    const b = await start({ env, dataDir: a.dataDir, ...(a.schema ? { schema: a.schema } : {}), ...(a.bucket ? { bucket: a.bucket } : {}) });
    const done = await until(async () => {
      const s = await get(`${b.upload}/from_url/status/?token=${token}`);
      return s.json.status === 'success' || s.json.status === 'error' ? s : undefined;
    }, 45_000);
    expect(done.json).toMatchObject({ status: 'success', size: payload.length });
    expect(origin.hits.get('/stall')).toBe(2);
  });
});
