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
    // A new upstream connection per request: a reused kept-alive one was sometimes reset after
    // multipart part PUTs (docs/reliability.md, "Findings not yet fixed"), failing SDK-flow tests.
    const up = http.request(target + req.url, { method: req.method, headers: req.headers, agent: false }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
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
