/**
 * Kept-alive connections after multipart part PUTs (docs/reliability.md): the same
 * socket answers the next request, again and again, straight to the Upload API and through the
 * recording proxy the SDK suite uses. The proxy forwarded the Upload server's hop-by-hop
 * `Keep-Alive: timeout=72` to its clients while closing their idle connections itself after 5 s,
 * so a client kept a connection exactly as long as the proxy did and a request sent as both ran
 * out was reset (the "reset after part PUTs" seen in test/uploads/sdk.test.ts on a busy machine).
 * And a part PUT that failed while its body was still arriving (over part_size without a length, a
 * full disk) destroyed the request: the rest of the body stayed unread on a paused socket, the
 * answer said keep-alive, and the next request on the connection waited until the body idle
 * timeout reset it.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usingS3 } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { bytes } from './helpers.js';
import { startProxy, type RecordingProxy } from './proxy.js';

const PART = 5_242_880;
// A stalled body loses its connection after 3 s (instead of 60): the reset, if any, comes soon.
const srv = useServer({ env: { STOWAGE_BODY_IDLE_TIMEOUT_MS: '3000' } });
let proxy: RecordingProxy;
beforeAll(async () => {
  proxy = await startProxy();
  proxy.setTarget(srv.upload);
});
afterAll(async () => proxy?.close());

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  reused: boolean;
  local: string;
}

function send(agent: http.Agent, method: string, url: string, body?: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = body ? { 'content-length': String(body.length), 'content-type': 'application/octet-stream' } : {};
    const req = http.request(url, { method, agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, reused: req.reusedSocket, local: `${req.socket?.localPort}` }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A started multipart upload's part URLs, with `base` in place of the Upload API's origin. */
async function partUrls(base: string): Promise<string[]> {
  const form = new URLSearchParams({ UPLOADCARE_PUB_KEY: srv.keys.public_key, filename: 'a.bin', size: String(2 * PART), content_type: 'application/octet-stream' });
  const r = await fetch(`${srv.upload}/multipart/start/`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() });
  const { parts } = (await r.json()) as { parts: string[] };
  return parts.map((u) => `${base}${new URL(u).pathname}${new URL(u).search}`);
}

describe.skipIf(usingS3())('kept-alive connections after part PUTs', () => {
  it.each([
    ['straight to the Upload API', () => srv.upload],
    ['through the recording proxy', () => proxy.url],
  ])('%s: one socket carries part PUTs and the next requests, repeated', async (_name, base) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const sockets = new Set<string>();
      for (let round = 0; round < 6; round++) {
        const urls = await partUrls(base());
        for (const [i, url] of urls.entries()) {
          const put = await send(agent, 'PUT', url, bytes(PART, round * 2 + i + 1));
          expect(put.status).toBe(200);
          sockets.add(put.local);
        }
        const next = await send(agent, 'POST', `${base()}/from_url/?pub_key=${srv.keys.public_key}&source_url=http://127.0.0.1:1/x`);
        expect(next.status).toBe(400);
        expect(next.reused).toBe(true);
        sockets.add(next.local);
      }
      expect(sockets.size).toBe(1);
    } finally {
      agent.destroy();
    }
  });

  it('a part refused mid-body (sent without a length, over part_size) answers, and the next request is answered too', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let round = 0; round < 3; round++) {
        const [url] = await partUrls(srv.upload);
        const refused = await new Promise<Answer>((resolve, reject) => {
          // No Content-Length: chunked, so the size is found out while the body streams in.
          const req = http.request(url!, { method: 'PUT', agent, headers: { 'content-type': 'application/octet-stream' } }, (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, reused: req.reusedSocket, local: '' }));
          });
          req.on('error', reject);
          const chunk = bytes(1024 * 1024, round + 1);
          let sent = 0;
          const more = () => {
            while (sent < 7 && req.write(chunk)) sent++;
            if (sent >= 7) req.end();
          };
          req.on('drain', () => {
            sent++;
            more();
          });
          more();
        });
        expect(refused.status).toBe(413);
        const next = await send(agent, 'POST', `${srv.upload}/from_url/?pub_key=${srv.keys.public_key}&source_url=http://127.0.0.1:1/x`);
        expect(next.status).toBe(400);
      }
    } finally {
      agent.destroy();
    }
  });

  it('the proxy announces how long it keeps an idle connection itself, never the Upload server\'s hint', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const [url] = await partUrls(proxy.url);
      const put = await send(agent, 'PUT', url!, bytes(PART, 9));
      expect(put.status).toBe(200);
      // Node's own server hint for its default 5 s keep-alive timeout; the Upload API says 72.
      expect(put.headers['keep-alive']).toBe('timeout=5');
      expect((await send(agent, 'GET', `${srv.upload}/info/`)).headers['keep-alive']).toBe('timeout=72');
    } finally {
      agent.destroy();
    }
  });
});
