/** A small origin server the from_url tests fetch from (bound to loopback). */
import http from 'node:http';
import type net from 'node:net';

export interface Origin {
  url: string;
  hits: Map<string, number>;
  /** Opens the gate that /gated and /gated-chunked wait on after their first half. */
  release(): void;
  close(): void;
}

export async function startOrigin(payload: Buffer, routes: Record<string, (req: http.IncomingMessage, res: http.ServerResponse) => void> = {}): Promise<Origin> {
  let open!: () => void;
  let gate = new Promise<void>((r) => (open = r));
  const hits = new Map<string, number>();
  const half = Math.floor(payload.length / 2);
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const custom = routes[path];
    if (custom) return custom(req, res);
    switch (path) {
      case '/plain/data.bin':
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(payload.length) });
        return res.end(payload);
      case '/with-disposition':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-disposition': 'attachment; filename="from header.txt"' });
        return res.end('named by the header\n');
      case '/gated':
      case '/gated-chunked':
        res.writeHead(200, path === '/gated' ? { 'content-length': String(payload.length) } : {});
        res.write(payload.subarray(0, half));
        void gate.then(() => res.end(payload.subarray(half)));
        return;
      case '/redirect':
        res.writeHead(302, { location: new URL(req.url ?? '', 'http://x').searchParams.get('to') ?? '/' });
        return res.end();
      default:
        res.writeHead(404, { 'content-type': 'text/plain' });
        return res.end('no');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    hits,
    release: () => {
      open();
      gate = new Promise<void>((r) => (open = r));
    },
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
