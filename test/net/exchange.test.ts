/**
 * OutboundClient.exchange(): the status and the start of the answer, against a real local server:
 * the excerpt's size and cut, bodies that are huge, endless or stalled, the deadline, redirects
 * not followed, connections kept or dropped, and the same SSRF guard as request().
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundClient, type OutboundOptions, type Resolver } from '../../src/net/outbound.js';

let server: http.Server;
let base: string;
let port: number;
let hits = 0;
const clients: OutboundClient[] = [];
const open = new Set<http.ServerResponse>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    hits++;
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const p = new URL(req.url ?? '/', 'http://x').pathname;
      const sent = Buffer.concat(parts).toString('utf8');
      if (p === '/echo') return void res.end(`${req.method} ${sent} type=${req.headers['content-type']} ua=${req.headers['user-agent']}`);
      if (p === '/euros') return void res.end('€'.repeat(1000)); // 3 bytes each
      if (p === '/invalid') return void res.end(Buffer.alloc(40, 0xff)); // not UTF-8 at all
      if (p === '/huge') return void res.writeHead(200, { 'content-length': String(50 * 1024 * 1024) }).write('h'.repeat(64 * 1024));
      if (p === '/endless') {
        open.add(res);
        return void res.writeHead(200).write('e'.repeat(5000));
      }
      if (p === '/stall') {
        open.add(res);
        return void res.writeHead(200).write('partial');
      }
      if (p === '/silent') return void open.add(res);
      if (p === '/redirect') return void res.writeHead(302, { location: `${base}/echo` }).end('moved');
      res.writeHead(404).end('none');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  for (const res of open) res.destroy();
  await Promise.all(clients.map((c) => c.close()));
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function client(o: Partial<OutboundOptions> = {}): OutboundClient {
  const c = new OutboundClient({ allowCidrs: ['127.0.0.1/32'], timeoutMs: 2000, maxBytes: 10_000, maxRedirects: 5, ...o });
  clients.push(c);
  return c;
}
const post = (c: OutboundClient, path: string, excerptBytes = 1024) => c.exchange(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}', excerptBytes });
const code = (p: Promise<unknown>) => p.then(() => 'resolved', (e: { code?: string }) => e.code);

describe('the answer', () => {
  it('posts the body with its headers and the default User-Agent; answers status and text', async () => {
    const r = await post(client({ userAgent: 'Hooks/1' }), '/echo');
    expect(r).toEqual({ status: 200, excerpt: 'POST {"a":1} type=application/json ua=Hooks/1', bodyError: null });
  });

  it('a given User-Agent wins over the default', async () => {
    const r = await client().exchange(`${base}/echo`, { method: 'POST', headers: { 'user-agent': 'Mine' }, body: 'x', excerptBytes: 200 });
    expect(r.excerpt).toMatch(/ua=Mine$/);
  });

  it('the excerpt is at most excerptBytes, cut on a character boundary', async () => {
    expect((await post(client(), '/euros', 10)).excerpt).toBe('€€€');
    expect((await post(client(), '/euros', 1024)).excerpt).toBe('€'.repeat(341));
  });

  it('bytes that are not UTF-8 become U+FFFD and the excerpt still fits excerptBytes', async () => {
    const r = await post(client(), '/invalid', 10);
    expect(r.excerpt).toBe('\uFFFD'.repeat(3));
  });

  it('a 4xx or 5xx is an answer like any other', async () => {
    expect(await post(client(), '/nothing-here')).toEqual({ status: 404, excerpt: 'none', bodyError: null });
  });

  it('a redirect is the answer: its status and body, the Location not fetched', async () => {
    const before = hits;
    expect(await post(client(), '/redirect')).toEqual({ status: 302, excerpt: 'moved', bodyError: null });
    expect(hits).toBe(before + 1);
  });
});

describe('bodies that do not end well', () => {
  it('a huge body: the excerpt comes at once, the rest is not read', async () => {
    const t0 = Date.now();
    const r = await post(client({ timeoutMs: 5000 }), '/huge', 100);
    expect(r).toEqual({ status: 200, excerpt: 'h'.repeat(100), bodyError: null });
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('a body that never ends: the excerpt comes long before the deadline', async () => {
    const t0 = Date.now();
    const r = await post(client({ timeoutMs: 5000 }), '/endless', 1024);
    expect(r).toEqual({ status: 200, excerpt: 'e'.repeat(1024), bodyError: null });
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('a body that stalls before the excerpt is full: the status with a timeout, within the deadline', async () => {
    const t0 = Date.now();
    const r = await post(client({ timeoutMs: 500 }), '/stall');
    expect(r.status).toBe(200);
    expect(r.excerpt).toBeNull();
    expect(r.bodyError?.code).toBe('DownloadFileTimeLimitExceededError');
    expect(Date.now() - t0).toBeLessThan(1500);
  });

  it('an idle limit shorter than the deadline still applies', async () => {
    const t0 = Date.now();
    const r = await post(client({ timeoutMs: 5000, idleTimeoutMs: 300 }), '/stall');
    expect(r.bodyError?.code).toBe('DownloadFileTimeLimitExceededError');
    expect(Date.now() - t0).toBeLessThan(2500);
  });

  it('no answer within the deadline -> DownloadFileTimeLimitExceededError', async () => {
    const t0 = Date.now();
    expect(await code(post(client({ timeoutMs: 400 }), '/silent'))).toBe('DownloadFileTimeLimitExceededError');
    expect(Date.now() - t0).toBeLessThan(1500);
  });

  it('connection refused -> DownloadFileHTTPNetworkError', async () => {
    const free = http.createServer();
    await new Promise<void>((r) => free.listen(0, '127.0.0.1', r));
    const freePort = (free.address() as AddressInfo).port;
    await new Promise((r) => free.close(r));
    const p = client().exchange(`http://127.0.0.1:${freePort}/`, { method: 'POST', headers: {}, body: 'x', excerptBytes: 10 });
    expect(await code(p)).toBe('DownloadFileHTTPNetworkError');
  });
});

describe('connections', () => {
  // A server of their own, which notes the socket of each request it serves.
  let medium: http.Server;
  let mediumUrl: string;
  const served: Socket[] = [];
  beforeAll(async () => {
    medium = http.createServer((req, res) => {
      served.push(req.socket);
      req.resume();
      req.on('end', () => res.end('m'.repeat(3000)));
    });
    await new Promise<void>((r) => medium.listen(0, '127.0.0.1', r));
    mediumUrl = `http://127.0.0.1:${(medium.address() as AddressInfo).port}/medium`;
  });
  afterAll(async () => {
    medium.closeAllConnections();
    await new Promise((r) => medium.close(r));
  });

  /** The server's sockets of three exchanges, a moment after the last. */
  async function socketsOf(c: OutboundClient): Promise<Socket[]> {
    const from = served.length;
    for (let i = 0; i < 3; i++) expect((await c.exchange(mediumUrl, { method: 'POST', headers: {}, body: 'x', excerptBytes: 100 })).excerpt).toBe('m'.repeat(100));
    await new Promise((r) => setTimeout(r, 200));
    return served.slice(from);
  }

  it('an answer longer than the excerpt but within the body cap keeps its connection', async () => {
    const sockets = await socketsOf(client({ maxBytes: 10_000 }));
    expect(sockets.every((s) => !s.destroyed)).toBe(true);
    expect(new Set(sockets).size).toBeLessThan(3); // reused
  });

  it('past the body cap the connection is dropped', async () => {
    const sockets = await socketsOf(client({ maxBytes: 1000 }));
    expect(sockets.every((s) => s.destroyed)).toBe(true);
  });
});

describe('SSRF guard', () => {
  it('never contacts a refused address', async () => {
    const before = hits;
    expect(await code(post(client({ allowCidrs: [] }), '/echo'))).toBe('URLHostPrivateIPForbiddenError');
    expect(await code(client({ allowCidrs: [] }).exchange('http://[::1]:9/x', { method: 'POST', headers: {}, excerptBytes: 10 }))).toBe('URLHostPrivateIPForbiddenError');
    expect(hits).toBe(before);
  });

  it('refuses a hostname that resolves to a refused address, and connects to the checked one otherwise', async () => {
    const before = hits;
    const toLoopback: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    const refused = client({ allowCidrs: [], resolver: toLoopback }).exchange(`http://hooks.example:${port}/echo`, { method: 'POST', headers: {}, body: 'x', excerptBytes: 10 });
    expect(await code(refused)).toBe('URLHostPrivateIPForbiddenError');
    expect(hits).toBe(before);
    const allowed = await client({ resolver: toLoopback }).exchange(`http://hooks.example:${port}/echo`, { method: 'POST', headers: {}, body: 'x', excerptBytes: 6 });
    expect(allowed).toEqual({ status: 200, excerpt: 'POST x', bodyError: null });
  });

  it('URL syntax errors are refusals, as for request()', async () => {
    expect(await code(client().exchange('ftp://example.com/x', { method: 'POST', headers: {}, excerptBytes: 10 }))).toBe('URLSchemeInvalidError');
    expect(await code(client().exchange('not a url', { method: 'POST', headers: {}, excerptBytes: 10 }))).toBe('URLSchemeRequiredError');
  });
});
