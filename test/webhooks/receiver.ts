/**
 * A webhook receiver for tests: a real HTTP server on 127.0.0.1 that records every request and
 * answers as the test's script says (status, headers and body, a body that never ends, or hang
 * without answering).
 */
import crypto from 'node:crypto';
import http from 'node:http';

export interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: a test reads any field of the payload; the assertion is the check
  json: any;
}

/**
 * How to answer: a status with a body (and headers), the body's start with the response left open
 * (`open`: a body that never ends), or no answer at all.
 */
export type Reply = { status: number; body?: string; headers?: Record<string, string>; open?: boolean } | 'hang';

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Requests not answered or dropped yet, and the most there ever were at once. */
  inFlight: number;
  maxInFlight: number;
  /** The n-th request (0-based) is answered by script(n); default 200 "ok". */
  script: (n: number, req: Received) => Reply;
  waitFor(count: number, timeoutMs?: number, filter?: (r: Received) => boolean): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(script: (n: number, req: Received) => Reply = () => ({ status: 200, body: 'ok' }), port = 0): Promise<Receiver> {
  const received: Received[] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    receiver.inFlight++;
    receiver.maxInFlight = Math.max(receiver.maxInFlight, receiver.inFlight);
    res.on('close', () => receiver.inFlight--);
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const r: Received = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, json };
      const n = received.length;
      received.push(r);
      const reply = receiver.script(n, r);
      if (reply === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers });
      if (!reply.open) return void res.end(reply.body ?? '');
      res.write(reply.body ?? '');
      hanging.add(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as { port: number }).port;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${bound}/hook`,
    port: bound,
    received,
    inFlight: 0,
    maxInFlight: 0,
    script,
    async waitFor(count, timeoutMs = 20_000, filter = () => true) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hits = received.filter(filter);
        if (hits.length >= count) return hits;
        if (Date.now() > deadline) throw new Error(`receiver got ${hits.length} of ${count} expected requests: ${JSON.stringify(received.map((r) => r.json?.hook?.event))}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}

/** The spec's check, written independently of the server: v1=<hex HMAC-SHA256(secret, body)>. */
export function validSignature(secret: string, body: string, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string' || !header.startsWith('v1=')) return false;
  const expected = crypto.createHmac('sha256', secret).update(body).digest('hex');
  const given = header.slice(3);
  return given.length === expected.length && crypto.timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

/** Polls `fn` until it returns a truthy value. */
export async function eventually<T>(fn: () => Promise<T | null | undefined | false>, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
