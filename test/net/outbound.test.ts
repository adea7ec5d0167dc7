import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundClient, type OutboundOptions, type Resolver } from '../../src/net/outbound.js';

/** A local server whose routes exercise redirects, sizes and stalls; it counts every hit. */
let server: http.Server;
let base: string;
let port: number;
let hits = 0;
const clients: OutboundClient[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    hits++;
    const url = new URL(req.url ?? '/', 'http://x');
    const p = url.pathname;
    if (p === '/ok') return void res.end('hello');
    if (p === '/echo') {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => res.end(`${req.method} ${body} auth=${req.headers.authorization ?? ''} ua=${req.headers['user-agent']}`));
      return;
    }
    if (p === '/redirect') return void res.writeHead(Number(url.searchParams.get('code') ?? 302), { location: url.searchParams.get('to')! }).end();
    const loop = /^\/loop\/(\d+)$/.exec(p);
    if (loop) {
      const n = Number(loop[1]);
      return void (n === 0 ? res.end('done') : res.writeHead(302, { location: `/loop/${n - 1}` }).end());
    }
    if (p === '/big') return void res.writeHead(200, { 'content-length': '1000' }).end('x'.repeat(1000));
    if (p === '/stream-big') {
      res.writeHead(200); // chunked: no declared length
      for (let i = 0; i < 10; i++) res.write('y'.repeat(100));
      return void res.end();
    }
    if (p === '/slow-headers') return; // never answers
    if (p === '/slow-body') return void res.writeHead(200).write('partial'); // stalls after a chunk
    if (p === '/drip') {
      // A byte every 50 ms for 5 s: never idle long, but past a short total deadline.
      res.writeHead(200);
      const t = setInterval(() => res.write('d'), 50);
      setTimeout(() => (clearInterval(t), res.end()), 5000);
      return void res.on('close', () => clearInterval(t));
    }
    const status = /^\/status\/(\d+)$/.exec(p);
    if (status) return void res.writeHead(Number(status[1])).end('nope');
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function client(o: Partial<OutboundOptions> = {}): OutboundClient {
  const c = new OutboundClient({ allowCidrs: ['127.0.0.1/32'], timeoutMs: 2000, maxBytes: 10_000, maxRedirects: 5, ...o });
  clients.push(c);
  return c;
}
const code = (p: Promise<unknown>) => p.then(() => 'resolved', (e: { code?: string }) => e.code);
async function drain(body: AsyncIterable<Uint8Array>): Promise<number> {
  let n = 0;
  for await (const c of body) n += c.length;
  return n;
}

describe('URL syntax', () => {
  const c = client();
  it.each([
    ['', 'URLParsingFailedError'],
    ['example.com/a.png', 'URLSchemeRequiredError'],
    ['//example.com/a.png', 'URLSchemeRequiredError'],
    ['ftp://example.com/a', 'URLSchemeInvalidError'],
    ['file:///etc/passwd', 'URLSchemeInvalidError'],
    ['gopher://127.0.0.1:6379/_x', 'URLSchemeInvalidError'],
    ['javascript:alert(1)', 'URLSchemeInvalidError'],
    ['http:///path', 'URLHostRequiredError'],
    ['http://user@/path', 'URLHostRequiredError'],
    ['http:example.com', 'URLHostRequiredError'],
    ['http://exa mple.com/', 'URLHostMalformedError'],
    ['http://a..b/', 'URLHostMalformedError'],
    ['http://-bad.com/', 'URLHostMalformedError'],
    ['http://[::1/', 'URLHostMalformedError'],
  ])('%j -> %s', async (url, expected) => {
    const err = await c.checkUrl(url).catch((e) => e);
    expect(err).toMatchObject({ status: 400, code: expected });
  });
  it('uses the wire messages', async () => {
    await expect(c.checkUrl('ftp://x/')).rejects.toThrow('Invalid URL scheme.');
    await expect(c.checkUrl('http://10.0.0.1/')).rejects.toThrow('Only public IPs are allowed.');
  });
});

describe('SSRF guard: refused address classes (default policy)', () => {
  const c = client({ allowCidrs: [] });
  it.each([
    '127.0.0.1', '[::1]', '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.0.1', '192.168.0.1',
    '169.254.169.254', '[fc00::1]', '[fd00:ec2::254]', '[fe80::1]', '[::ffff:127.0.0.1]', '[::ffff:10.0.0.1]',
    '0.0.0.0', '100.64.0.1', '100.100.100.200', '255.255.255.255', '224.0.0.1',
    // Alternative IPv4 spellings normalised by the URL parser must not slip through.
    '0x7f.1', '2130706433', '127.1', '017700000001',
  ])('refuses http://%s/', async (host) => {
    await expect(code(c.checkUrl(`http://${host}/x`))).resolves.toBe('URLHostPrivateIPForbiddenError');
    await expect(code(c.request(`http://${host}/x`))).resolves.toBe('URLHostPrivateIPForbiddenError');
  });

  it('never contacts a refused target (request, not just checkUrl)', async () => {
    const before = hits;
    await expect(code(c.request(`${base}/ok`))).resolves.toBe('URLHostPrivateIPForbiddenError');
    expect(hits).toBe(before);
  });

  it('refuses a hostname that resolves to loopback (localhost)', async () => {
    const before = hits;
    await expect(code(c.checkUrl(`http://localhost:${port}/ok`))).resolves.toBe('URLHostPrivateIPForbiddenError');
    await expect(code(c.request(`http://localhost:${port}/ok`))).resolves.toBe('URLHostPrivateIPForbiddenError');
    expect(hits).toBe(before);
  });
});

describe('SSRF guard: DNS', () => {
  const fake = (table: Record<string, string[]>): Resolver => async (host) => {
    const addrs = table[host];
    if (!addrs) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return addrs.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

  it('unknown host -> HostnameNotFoundError', async () => {
    const c = client({ resolver: fake({}) });
    await expect(c.checkUrl('http://nowhere.test/')).rejects.toMatchObject({ code: 'HostnameNotFoundError', message: 'Host does not exist.' });
    await expect(code(c.request('http://nowhere.test/'))).resolves.toBe('HostnameNotFoundError');
  });

  it('one refused address among several refuses the host', async () => {
    const c = client({ allowCidrs: [], resolver: fake({ 'mixed.test': ['93.184.216.34', '10.0.0.1'] }) });
    await expect(code(c.checkUrl('http://mixed.test/'))).resolves.toBe('URLHostPrivateIPForbiddenError');
  });

  it('connects to the address our resolver checked (the socket uses our lookup)', async () => {
    // "svc.test" exists only in the fake resolver, so a successful fetch proves the connect used it.
    const c = client({ resolver: fake({ 'svc.test': ['127.0.0.1'] }) });
    const res = await c.request(`http://svc.test:${port}/ok`);
    expect(res.status).toBe(200);
    expect(await res.text(100)).toBe('hello');
  });

  it('a rebinding answer at connect time is refused (no check/connect gap)', async () => {
    let calls = 0;
    const rebinding: Resolver = async () => [{ address: calls++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
    const c = client({ allowCidrs: [], resolver: rebinding });
    await c.checkUrl(`http://rebind.test:${port}/ok`); // first answer is public: accepted
    const before = hits;
    await expect(code(c.request(`http://rebind.test:${port}/ok`))).resolves.toBe('URLHostPrivateIPForbiddenError');
    expect(hits).toBe(before);
  });
});

describe('allowlist', () => {
  it('lets loopback through when allowlisted', async () => {
    const c = client({ allowCidrs: ['127.0.0.0/8'] });
    await c.checkUrl(`${base}/ok`);
    await c.checkUrl(`http://localhost:${port}/ok`);
    const res = await c.request(`http://localhost:${port}/ok`);
    expect([res.status, await res.text(100)]).toEqual([200, 'hello']);
  });
  it('rejects a bad CIDR at construction', () => {
    expect(() => new OutboundClient({ allowCidrs: ['127.0.0.0/99'], timeoutMs: 1, maxBytes: 1, maxRedirects: 0 })).toThrow('127.0.0.0/99');
  });
});

describe('redirects', () => {
  it('follows up to the limit and reports the final URL', async () => {
    const res = await client({ maxRedirects: 2 }).request(`${base}/loop/2`);
    expect(res.status).toBe(200);
    expect(res.finalUrl).toBe(`${base}/loop/0`);
    expect(await res.text(10)).toBe('done');
  });
  it('one more than the limit -> URLRedirectsLimitExceededError', async () => {
    await expect(client({ maxRedirects: 2 }).request(`${base}/loop/3`)).rejects.toMatchObject({
      status: 400, code: 'URLRedirectsLimitExceededError', message: 'Too many redirects.',
    });
    await expect(code(client({ maxRedirects: 0 }).request(`${base}/loop/1`))).resolves.toBe('URLRedirectsLimitExceededError');
  });
  it.each([
    'http://127.0.0.2/ok', 'http://169.254.169.254/latest/meta-data/', 'http://[::1]/', 'http://10.0.0.1/',
  ])('re-checks each hop: allowed host -> %s is refused', async (to) => {
    const c = client({ allowCidrs: ['127.0.0.1/32'] });
    const url = `${base}/redirect?to=${encodeURIComponent(to)}`;
    await expect(code(c.request(url))).resolves.toBe('URLHostPrivateIPForbiddenError');
  });
  it('refuses a redirect to a non-http scheme', async () => {
    const url = `${base}/redirect?to=${encodeURIComponent('file:///etc/passwd')}`;
    await expect(code(client().request(url))).resolves.toBe('URLSchemeInvalidError');
  });
  it('307 keeps method and body; 303 turns into GET', async () => {
    const c = client();
    const r307 = await c.request(`${base}/redirect?code=307&to=/echo`, { method: 'POST', body: 'payload' });
    expect(await r307.text(200)).toMatch(/^POST payload/);
    const r303 = await c.request(`${base}/redirect?code=303&to=/echo`, { method: 'POST', body: 'payload' });
    expect(await r303.text(200)).toMatch(/^GET  /);
  });
  it('drops Authorization on a cross-origin hop', async () => {
    const c = client({ resolver: async () => [{ address: '127.0.0.1', family: 4 }] });
    const to = `http://other.test:${port}/echo`;
    const res = await c.request(`${base}/redirect?code=307&to=${encodeURIComponent(to)}`, { headers: { Authorization: 'secret' } });
    expect(await res.text(200)).toContain('auth= ');
  });
  it('followRedirects: false returns the 3xx', async () => {
    const res = await client().request(`${base}/loop/1`, { followRedirects: false });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/loop/0');
    await res.discard();
  });
});

describe('size cap', () => {
  const c = client({ maxBytes: 100 });
  it('declared Content-Length too large: download() fails before reading', async () => {
    await expect(c.download(`${base}/big`)).rejects.toMatchObject({
      code: 'DownloadFileSizeLimitExceededError', message: 'Downloaded file is too big: 1000 > 100.',
    });
  });
  it('declared too large: request() still returns the status, the body refuses', async () => {
    const res = await c.request(`${base}/big`);
    expect(res.status).toBe(200);
    expect(res.contentLength).toBe(1000);
    await expect(code(drain(res.body))).resolves.toBe('DownloadFileSizeLimitExceededError');
  });
  it('streamed body without a length is cut at the cap', async () => {
    const res = await c.download(`${base}/stream-big`);
    expect(res.contentLength).toBeNull();
    await expect(code(drain(res.body))).resolves.toBe('DownloadFileSizeLimitExceededError');
  });
  it('per-request maxBytes overrides the default', async () => {
    const res = await c.download(`${base}/big`, { maxBytes: 1000 });
    expect(await drain(res.body)).toBe(1000);
  });
  it('text() truncates instead of failing', async () => {
    const res = await c.request(`${base}/stream-big`);
    expect(await res.text(10)).toBe('y'.repeat(10));
  });
});

describe('timeouts and failures', () => {
  it('no response headers within the deadline -> DownloadFileTimeLimitExceededError', async () => {
    const started = Date.now();
    await expect(client({ timeoutMs: 300 }).request(`${base}/slow-headers`)).rejects.toMatchObject({ code: 'DownloadFileTimeLimitExceededError' });
    expect(Date.now() - started).toBeLessThan(2000);
  });
  it('a body that stalls -> DownloadFileTimeLimitExceededError while reading', async () => {
    const res = await client({ timeoutMs: 300 }).request(`${base}/slow-body`);
    expect(res.status).toBe(200);
    await expect(code(drain(res.body))).resolves.toBe('DownloadFileTimeLimitExceededError');
  });
  it('a body that keeps dripping past the total deadline -> DownloadFileTimeLimitExceededError while reading', async () => {
    // Only the deadline (not undici's idle timeouts, 10 s here) can end this one.
    const res = await client({ timeoutMs: 400, idleTimeoutMs: 10_000 }).request(`${base}/drip`);
    expect(res.status).toBe(200);
    await expect(code(res.text(10_000))).resolves.toBe('DownloadFileTimeLimitExceededError');
  });
  it('connection refused -> DownloadFileHTTPNetworkError', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    await expect(client().request(`http://127.0.0.1:${deadPort}/`)).rejects.toMatchObject({
      code: 'DownloadFileHTTPNetworkError', message: 'HTTP network error: ECONNREFUSED.',
    });
  });
  it('request() returns remote 4xx/5xx; download() turns them into errors', async () => {
    const c = client();
    const res = await c.request(`${base}/status/404`);
    expect(res.status).toBe(404);
    expect(await res.text(100)).toBe('nope');
    await expect(c.download(`${base}/status/404`)).rejects.toMatchObject({ status: 400, code: 'DownloadFileHTTPClientError', message: 'HTTP client error: 404.' });
    await expect(c.download(`${base}/status/503`)).rejects.toMatchObject({ code: 'DownloadFileHTTPServerError', message: 'HTTP server error: 503.' });
  });
  it('sends the configured User-Agent', async () => {
    const res = await client({ userAgent: 'Stowage-Test/1' }).request(`${base}/echo`);
    expect(await res.text(200)).toContain('ua=Stowage-Test/1');
  });
});
