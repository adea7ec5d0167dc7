/**
 * Slow and stalled senders lose their connection within the configured bounds (headers, whole
 * request, idle body) instead of holding it for minutes; uploads that keep moving are unaffected,
 * and a client that walks away mid-upload is logged as such, not as a server error.
 */
import crypto from 'node:crypto';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { uploadBase } from '../helpers/rest.js';

const srv = useServer({
  env: {
    STOWAGE_LOG_LEVEL: 'info',
    STOWAGE_HEADERS_TIMEOUT_MS: '1000',
    STOWAGE_REQUEST_TIMEOUT_MS: '2000',
    STOWAGE_UPLOAD_REQUEST_TIMEOUT_MS: '4000',
    STOWAGE_BODY_IDLE_TIMEOUT_MS: '1000',
  },
});

interface Outcome {
  closedAfterMs: number;
  response: string;
}

/**
 * Opens a raw connection, writes `head`, then writes `drip` every `everyMs` until the server closes
 * the connection or `giveUpMs` passes (then the connection is closed here and the outcome says so).
 */
function slowSender(base: string, head: string, drip: string | null, everyMs: number, giveUpMs: number): Promise<Outcome & { gaveUp: boolean }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const started = Date.now();
    let response = '';
    let gaveUp = false;
    const socket = net.connect(Number(port), hostname, () => socket.write(head));
    const dripper = drip === null ? null : setInterval(() => socket.writable && socket.write(drip), everyMs);
    const giveUp = setTimeout(() => {
      gaveUp = true;
      socket.destroy();
    }, giveUpMs);
    socket.on('data', (d) => (response += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (dripper) clearInterval(dripper);
      clearTimeout(giveUp);
      resolve({ closedAfterMs: Date.now() - started, response, gaveUp });
    });
  });
}

describe('request timeouts', () => {
  it('headers that never finish are cut after the headers timeout, on every surface', async () => {
    for (const base of [srv.rest, srv.upload, srv.cdn]) {
      const r = await slowSender(base, 'GET /files/ HTTP/1.1\r\nHost: x\r\n', 'X-Slow: 1\r\n', 200, 8000);
      expect(r.gaveUp, base).toBe(false);
      // 1 s timeout, checked every 250 ms: well under the 8 s the client would have gone on.
      expect(r.closedAfterMs, base).toBeLessThan(4000);
    }
  });

  it('a REST body that trickles in is cut after the request timeout (408)', async () => {
    const head = `POST /webhooks/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`;
    const r = await slowSender(srv.rest, head, ' ', 200, 10_000);
    expect(r.gaveUp).toBe(false);
    expect(r.closedAfterMs).toBeGreaterThanOrEqual(1900);
    expect(r.closedAfterMs).toBeLessThan(6000);
    expect(r.response).toMatch(/^HTTP\/1\.1 408/);
  });

  it('an upload body that stops arriving is cut after the body idle timeout', async () => {
    const boundary = 'stall';
    const head =
      `POST /base/ HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 1000000\r\n\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="UPLOADCARE_PUB_KEY"\r\n\r\n${srv.keys.public_key}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\nfirst bytes`;
    const r = await slowSender(srv.upload, head, null, 0, 10_000);
    expect(r.gaveUp).toBe(false);
    expect(r.closedAfterMs).toBeLessThan(3500);
  });

  it('an upload body that trickles in is cut after the upload request timeout, not the idle one', async () => {
    const boundary = 'drip';
    const head =
      `POST /base/ HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 1000000\r\n\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\n`;
    const r = await slowSender(srv.upload, head, 'x'.repeat(10), 200, 12_000);
    expect(r.gaveUp).toBe(false);
    // Moving bytes keep it past the 1 s idle bound; the 4 s request bound ends it.
    expect(r.closedAfterMs).toBeGreaterThanOrEqual(3900);
    expect(r.closedAfterMs).toBeLessThan(8000);
  });

  it('a client that walks away mid-upload is logged at info without a stack; uploads that keep moving still work', async () => {
    const before = srv.server.output().length;
    const aborted = new AbortController();
    const boundary = 'gone';
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\n${'x'.repeat(100_000)}`));
      },
    });
    const pending = fetch(`${srv.upload}/base/?pub_key=${srv.keys.public_key}`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: stream,
      duplex: 'half',
      signal: aborted.signal,
    } as RequestInit).catch(() => null);
    await new Promise((r) => setTimeout(r, 300));
    aborted.abort();
    await pending;
    const deadline = Date.now() + 5000;
    while (!srv.server.output().slice(before).includes('client closed the connection') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const lines = srv.server
      .output()
      .slice(before)
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; msg: string; err?: { stack?: string } });
    const abort = lines.find((l) => l.msg.includes('client closed the connection'));
    expect(abort?.level).toBe(30);
    expect(JSON.stringify(abort)).not.toContain('stack');
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);

    const data = crypto.randomBytes(300_000);
    const ok = await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'ok.bin', data }]);
    expect(ok.status).toBe(200);
    const back = Buffer.from(await (await fetch(`${srv.cdn}/${ok.json.file}/`)).arrayBuffer());
    expect(back.equals(data)).toBe(true);
  });
});
