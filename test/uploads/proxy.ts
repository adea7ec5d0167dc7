/** A recording reverse proxy in front of the Upload API: which paths the SDK called, and how many part PUTs overlapped. */
import http from 'node:http';
import net from 'node:net';

export interface RecordingProxy {
  url: string;
  paths: string[];
  maxConcurrentPuts: number;
  setTarget(url: string): void;
  close(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/**
 * Hop-by-hop headers belong to one connection (RFC 9110 §7.6.1) and are never forwarded. Passing
 * the Upload server's `Keep-Alive: timeout=72` on to the client made it keep its connection to
 * this proxy for 5 s (Node's agent: the lesser of its own 5 s and the hint) while this server
 * closes idle connections after its own 5 s: a request sent as both timers ran out was reset.
 */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

export function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const named = new Set((String(headers['connection'] ?? '')).toLowerCase().split(',').map((h) => h.trim()));
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !HOP_BY_HOP.has(k) && !named.has(k)));
}

export async function startProxy(): Promise<RecordingProxy> {
  let target = '';
  let inflight = 0;
  const rec: RecordingProxy = {
    url: '',
    paths: [],
    maxConcurrentPuts: 0,
    setTarget: (u) => (target = u),
    close: () => new Promise((r) => server.close(() => r())),
  };
  const server = http.createServer((req, res) => {
    const isPut = req.method === 'PUT';
    rec.paths.push(`${req.method} ${(req.url ?? '').split('?')[0]}`);
    if (isPut) rec.maxConcurrentPuts = Math.max(rec.maxConcurrentPuts, ++inflight);
    // Kept-alive upstream connections (the global agent), as a real proxy keeps them.
    const up = http.request(target + req.url, { method: req.method, headers: endToEnd(req.headers) }, (r) => {
      res.writeHead(r.statusCode ?? 502, endToEnd(r.headers));
      r.pipe(res);
      r.on('end', () => isPut && inflight--);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  rec.url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return rec;
}
