/** A keep-alive HTTP client for the fuzzers (undici: far cheaper per request than fetch). */
import net from 'node:net';
import { Agent, request } from 'undici';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  ms: number;
}

export function fuzzAgent(connections: number, timeoutMs: number): Agent {
  // Idle connections are dropped well before the server's own keep-alive timeout (5 s), so a
  // request never races the server closing the connection it was sent on.
  return new Agent({ connections, pipelining: 1, keepAliveTimeout: 1000, keepAliveMaxTimeout: 1000, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
}

/** One request; network failures (reset, timeout) are thrown, statuses are returned. */
export async function send(
  agent: Agent,
  url: string,
  opts: { method?: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE'; headers?: Record<string, string>; body?: Buffer | string; oneShot?: boolean } = {},
): Promise<Answer> {
  const t0 = performance.now();
  // oneShot: `Connection: close`, the connection is not reused after this request.
  const res = await request(url, { dispatcher: agent, method: opts.method ?? 'GET', headers: opts.headers, body: opts.body, reset: opts.oneShot ?? false });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers, body, ms: performance.now() - t0 };
}

/** Runs `task(i)` for i in [0, count) with at most `concurrency` at once. */
export async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
}

/** Sends raw bytes on a fresh connection; resolves with what came back once the server closes or `waitMs` passes. */
export function raw(base: string, bytes: Buffer, opts: { endWrite: boolean; waitMs: number }): Promise<{ text: string; closedByServer: boolean; ms: number }> {
  const { hostname, port } = new URL(base);
  const t0 = Date.now();
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname, () => (opts.endWrite ? socket.end(bytes) : socket.write(bytes)));
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closedByServer: false, ms: Date.now() - t0 });
    }, opts.waitMs);
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closedByServer: true, ms: Date.now() - t0 });
    });
    socket.on('error', () => undefined);
  });
}
