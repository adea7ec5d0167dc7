/**
 * deploy/nginx-cdn-front.conf run as shipped (only its port, cache directory and upstream address
 * changed) in front of a test server: a cached rendition and an original come from nginx with the
 * bytes and headers Stowage sends, a miss and an unknown file reach Stowage, a signed request is
 * never kept.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/server.js';
import { haveStrace, traced } from '../helpers/strace.js';
import { useServer } from '../helpers/use-server.js';

const hasNginx = (() => {
  try {
    execFileSync('nginx', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const srv = useServer();

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/**
 * The shipped front, pointed at `upstream` (host:port), listening on `port`, its cache in `dir`;
 * `freshFor` replaces how long an answer stays fresh before it is revalidated.
 */
function frontConfig(dir: string, port: number, upstream: string, freshFor?: string): string {
  let front = fs
    .readFileSync(path.join(ROOT, 'deploy', 'nginx-cdn-front.conf'), 'utf8')
    .replace('listen 8082;', `listen 127.0.0.1:${port};`)
    .replace('/var/cache/nginx/stowage-cdn', path.join(dir, 'cache'));
  if (freshFor) front = front.replace('proxy_cache_valid 200 60s;', `proxy_cache_valid 200 ${freshFor};`);
  const temp = (n: string) => `${n}_temp_path ${path.join(dir, n)};`;
  return `worker_processes 1;
daemon off;
pid ${path.join(dir, 'nginx.pid')};
error_log ${path.join(dir, 'error.log')} warn;
events { worker_connections 64; }
http {
  access_log off;
  ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(temp).join('\n  ')}
  upstream stowage_cdn { server ${upstream}; keepalive 8; }
  proxy_http_version 1.1;
  proxy_set_header Connection "";
  proxy_set_header Host $http_host;
${front}
}
`;
}

interface Front {
  base: string;
  /** The pid of nginx's worker process (the one that serves requests). */
  worker(): number;
  stop(): void;
}

/** The child of `master` that nginx titles "worker process" (not the cache manager or loader). */
function workerOf(master: number): number {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const title = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (ppid === master && title.includes('worker process')) return Number(entry);
    } catch {
      // Gone since the listing.
    }
  }
  throw new Error(`no nginx worker under ${master}`);
}

/** Starts nginx with the front before the suite's CDN; resolves once it answers. */
async function startFront(freshFor?: string): Promise<Front> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-cdn-front-'));
  // Started as root, nginx's workers run as nobody: they must reach the cache and temp paths,
  // which the master creates (and hands to them) inside this directory.
  fs.chmodSync(dir, 0o755);
  const port = await freePort();
  const file = path.join(dir, 'nginx.conf');
  fs.writeFileSync(file, frontConfig(dir, port, new URL(srv.cdn).host, freshFor));
  const nginx: ChildProcess = spawn('nginx', ['-p', dir, '-c', file, '-e', path.join(dir, 'error.log')], { stdio: 'ignore' });
  const front = {
    base: `http://127.0.0.1:${port}`,
    worker: () => workerOf(nginx.pid as number),
    stop() {
      nginx.kill('SIGTERM');
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  for (let i = 0; ; i++) {
    if (await fetch(`${front.base}/`).then(() => true, () => false)) return front;
    if (i > 100) {
      const log = fs.readFileSync(path.join(dir, 'error.log'), 'utf8');
      front.stop();
      throw new Error(`nginx did not start: ${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Answer {
  status: number;
  body: Buffer;
  headers: Headers;
}

async function get(url: string): Promise<Answer> {
  const res = await fetch(url);
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()), headers: res.headers };
}

/** A hit's own request id (deploy/nginx-cdn-front.conf says what it is made of). */
const HIT_ID = /^\d+\.\d{3}-\d+-\d+-\d+$/;

interface Marks {
  cacheStatus?: string;
  requestId?: string;
  renderState?: string;
}

/** GET over `agent` (a kept-alive connection); resolves where the answer came from once read. */
function httpGet(url: string, agent: http.Agent): Promise<Marks> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        res.resume();
        const header = (name: string) => res.headers[name] as string | undefined;
        res.once('end', () => resolve({ cacheStatus: header('x-cache-status'), requestId: header('x-request-id'), renderState: header('x-stowage-cache') }));
      })
      .once('error', reject);
  });
}

/** The headers a client or a downstream cache acts on. */
function served(a: Answer): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const h of ['content-type', 'content-length', 'etag', 'cache-control', 'last-modified', 'content-disposition', 'vary', 'access-control-allow-origin']) {
    out[h] = a.headers.get(h);
  }
  return out;
}

describe.skipIf(!hasNginx)('the nginx CDN front (deploy/nginx-cdn-front.conf)', () => {
  let shipped: Front | undefined;
  let front = '';
  let uuid = '';

  beforeAll(async () => {
    shipped = await startFront();
    front = shipped.base;
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } }).png().toBuffer();
    uuid = await srv.uploadFile('front.png', png, { type: 'image/png' });
  });

  afterAll(() => shipped?.stop());

  it('serves a cached rendition itself with the bytes and headers Stowage sends', async () => {
    const ref = `/${uuid}/-/resize/32x/-/format/webp/`;
    const direct = await get(`${srv.cdn}${ref}`);
    expect(direct.status).toBe(200);
    const first = await get(`${front}${ref}`);
    expect(first.headers.get('x-cache-status')).toBe('MISS');
    const again = await get(`${front}${ref}`);
    expect(again.headers.get('x-cache-status')).toBe('HIT');
    expect(again.status).toBe(200);
    expect(again.body.equals(direct.body)).toBe(true);
    expect(served(again)).toEqual(served(direct));
    expect(direct.headers.get('content-type')).toBe('image/webp');
  });

  it("answers a hit with a request id of its own, not the id or render state of the request that filled it", async () => {
    const ref = `/${uuid}/-/resize/28x/`;
    const miss = await get(`${front}${ref}`);
    expect(miss.headers.get('x-cache-status')).toBe('MISS');
    // A miss carries the node's own headers.
    const nodeId = miss.headers.get('x-request-id') ?? '';
    expect(nodeId).toMatch(/^[A-Za-z0-9._:-]+$/);
    expect(miss.headers.get('x-stowage-cache')).toBe('miss');
    // Two hits on one kept-alive connection, one on a connection of its own, and one more on the
    // first: in the same millisecond, on one connection or not, each hit's id is its own.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const other = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const hits = [];
    try {
      for (const via of [agent, agent, other, agent]) hits.push(await httpGet(`${front}${ref}`, via));
    } finally {
      agent.destroy();
      other.destroy();
    }
    const ids = hits.map((h) => h.requestId);
    for (const hit of hits) {
      expect(hit.cacheStatus).toBe('HIT');
      // The time in milliseconds, the worker's pid, the connection's serial and the request's number.
      expect(hit.requestId).toMatch(HIT_ID);
      expect(hit.renderState).toBeUndefined();
    }
    expect(new Set([nodeId, ...ids]).size).toBe(5);
    // A client's own sane id is echoed on a hit, as the node echoes it; any other is replaced.
    const given = await fetch(`${front}${ref}`, { headers: { 'x-request-id': 'client-trace.42:a' } });
    expect(given.headers.get('x-cache-status')).toBe('HIT');
    expect(given.headers.get('x-request-id')).toBe('client-trace.42:a');
    for (const insane of ['a b', 'x'.repeat(129), '']) {
      const res = await fetch(`${front}${ref}`, { headers: { 'x-request-id': insane } });
      expect(res.headers.get('x-cache-status')).toBe('HIT');
      expect(res.headers.get('x-request-id')).toMatch(HIT_ID);
    }
  });

  it('serves an original itself with the bytes and headers Stowage sends', async () => {
    const ref = `/${uuid}/`;
    const direct = await get(`${srv.cdn}${ref}`);
    await get(`${front}${ref}`);
    const again = await get(`${front}${ref}`);
    expect(again.headers.get('x-cache-status')).toBe('HIT');
    expect(again.body.equals(direct.body)).toBe(true);
    expect(served(again)).toEqual(served(direct));
    expect(direct.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
  });

  it('serves one copy whatever host name it is asked under', async () => {
    // The node's answer depends on the path and query alone, so the key is those: a second name
    // for the CDN (or its address) finds the copy the first one filled.
    const ref = `/${uuid}/-/resize/26x/`;
    const asked = (host: string) =>
      new Promise<string | undefined>((resolve, reject) => {
        http
          .get(`${front}${ref}`, { headers: { host } }, (res) => {
            res.resume();
            res.once('end', () => resolve(res.headers['x-cache-status'] as string | undefined));
          })
          .once('error', reject);
      });
    expect(await asked('cdn.example.test')).toBe('MISS');
    expect(await asked('other.example.test')).toBe('HIT');
    expect((await get(`${front}${ref}`)).headers.get('x-cache-status')).toBe('HIT');
  });

  it('passes a miss to Stowage and keeps no answer for an unknown file', async () => {
    const ref = `/${uuid}/-/resize/16x/`;
    const miss = await get(`${front}${ref}`);
    expect(miss.headers.get('x-cache-status')).toBe('MISS');
    expect(miss.status).toBe(200);
    expect((await sharp(miss.body).metadata()).width).toBe(16);
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (let i = 0; i < 2; i++) {
      const res = await get(`${front}/${unknown}/`);
      expect(res.status).toBe(404);
      expect(res.headers.get('x-cache-status')).toBe('MISS');
    }
  });

  it('sends every signed request to Stowage and keeps none', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await get(`${front}/${uuid}/-/resize/24x/?token=exp=1~acl=%2f*~hmac=00`);
      expect(res.headers.get('x-cache-status')).toBe('BYPASS');
    }
    // The same rendition without the token was never stored by the signed requests.
    const plain = await get(`${front}/${uuid}/-/resize/24x/`);
    expect(plain.headers.get('x-cache-status')).toBe('MISS');
  });

  it('stops serving a removed file once its copy is revalidated', async () => {
    // The shipped front keeps a copy fresh for 60 s; this one for 1 s, so the revalidation that
    // carries a removal to the front comes within the test.
    const quick = await startFront('1s');
    try {
      const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#cc3366' } }).png().toBuffer();
      const removed = await srv.uploadFile('removed.png', png, { type: 'image/png' });
      const ref = `/${removed}/-/resize/4x/`;
      expect((await get(`${quick.base}${ref}`)).status).toBe(200);
      expect((await srv.call('DELETE', `/files/${removed}/storage/`)).status).toBe(200);
      // The node itself answers 404 from now on.
      for (let i = 0; (await get(`${srv.cdn}${ref}`)).status !== 404; i++) {
        if (i > 50) throw new Error('the node still serves the removed file');
        await new Promise((r) => setTimeout(r, 100));
      }
      // The front's copy is fresh for one to two seconds (nginx counts whole seconds).
      let after = await get(`${quick.base}${ref}`);
      for (let i = 0; after.headers.get('x-cache-status') === 'HIT' && i < 30; i++) {
        await new Promise((r) => setTimeout(r, 100));
        after = await get(`${quick.base}${ref}`);
      }
      // Once expired, never served again, not even as stale: every request reaches the node.
      for (let i = 0; i < 3; i++) {
        expect(`${after.status} ${after.headers.get('x-cache-status')}`).toBe('404 EXPIRED');
        after = await get(`${quick.base}${ref}`);
      }
    } finally {
      quick.stop();
    }
  });

  it('serves a large original whole, and a range of it, from its copy', async () => {
    const big = Buffer.alloc(1024 * 1024 + 7);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
    const id = await srv.uploadFile('big.bin', big);
    const ref = `/${id}/`;
    await get(`${front}${ref}`);
    const again = await get(`${front}${ref}`);
    expect(again.headers.get('x-cache-status')).toBe('HIT');
    expect(again.body.equals(big)).toBe(true);
    const part = await fetch(`${front}${ref}`, { headers: { range: 'bytes=100-199' } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(big.subarray(100, 200))).toBe(true);
  });

  it('serves a copy revalidated by the node (304) with its bytes and headers', async () => {
    // Revalidation rewrites the header of the cached file in place while the front keeps the file
    // open between requests (open_file_cache): the next hit must read the rewritten file.
    const quick = await startFront('1s');
    try {
      const ref = `/${uuid}/-/resize/20x/`;
      const direct = await get(`${srv.cdn}${ref}`);
      expect((await get(`${quick.base}${ref}`)).headers.get('x-cache-status')).toBe('MISS');
      expect((await get(`${quick.base}${ref}`)).headers.get('x-cache-status')).toBe('HIT');
      let after = await get(`${quick.base}${ref}`);
      for (let i = 0; after.headers.get('x-cache-status') === 'HIT' && i < 30; i++) {
        await new Promise((r) => setTimeout(r, 100));
        after = await get(`${quick.base}${ref}`);
      }
      expect(after.headers.get('x-cache-status')).toBe('REVALIDATED');
      for (const answer of [after, await get(`${quick.base}${ref}`)]) {
        expect(answer.status).toBe(200);
        expect(answer.body.equals(direct.body)).toBe(true);
        expect(served(answer)).toEqual(served(direct));
      }
    } finally {
      quick.stop();
    }
  });

  it.skipIf(!haveStrace)('answers a hit without opening a file, setting a socket option or drawing random bytes', async () => {
    // What makes a hit cost what a static file does: the cache file stays open between requests
    // (no open, fstat, close), no TCP_CORK is set and cleared around each answer, and the hit's
    // request id is not nginx's $request_id (OpenSSL's random bytes, with a getpid call each).
    const ref = `/${uuid}/-/resize/30x/`;
    await get(`${front}${ref}`);
    expect((await get(`${front}${ref}`)).headers.get('x-cache-status')).toBe('HIT');
    // One kept-alive connection: no accept and no close of a client socket among the calls.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const lines = await traced(shipped?.worker() as number, [], async () => {
      for (let i = 0; i < 5; i++) expect((await httpGet(`${front}${ref}`, agent)).cacheStatus).toBe('HIT');
      agent.destroy();
      await new Promise((r) => setTimeout(r, 200));
    });
    const calls = lines.map((l) => /^(?:\d+\s+)?(\w+)\(/.exec(l)?.[1]).filter(Boolean);
    const count = (name: string) => calls.filter((c) => c === name).length;
    expect(count('writev')).toBe(5);
    expect(count('sendfile')).toBe(5);
    // The stored header, read from the kept file.
    expect(count('pread64')).toBe(5);
    expect(count('getpid')).toBe(0);
    expect(count('openat') + count('open') + count('newfstatat') + count('fstat')).toBe(0);
    // TCP_NODELAY is set once per kept-alive connection; nothing per answer.
    expect(lines.filter((l) => l.includes('TCP_CORK'))).toEqual([]);
    expect(count('setsockopt')).toBeLessThanOrEqual(1);
    // The only close is the client connection's, when the agent let it go.
    expect(count('close')).toBeLessThanOrEqual(1);
  });
});
