/**
 * An Upload API answer that goes out before the request body was read (here: /base/ refusing file
 * bytes once the anonymous staging budget is spent, before any key arrived) reaches the client:
 *   - a small body is drained and the kept-alive connection answers the next request;
 *   - a large one is answered with `Connection: close`, then the server half-closes and the
 *     connection ends cleanly (FIN, no reset) once the client stops sending.
 * Before src/http/common/unread-body.ts the server stopped reading the half-read body: the next
 * request on the connection was never answered and the large case never closed (until the body
 * idle timeout reset it).
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';

const BUDGET = 256 * 1024;
const srv = useServer({
  env: { STOWAGE_ANONYMOUS_STAGING_PER_IP_BYTES: String(BUDGET), STOWAGE_RATE_UPLOAD_PER_SEC: '0', STOWAGE_RATE_UPLOAD_IP_PER_SEC: '0' },
});

const BOUNDARY = 'early';
/** The head of an anonymous /base/ request whose one file part declares `bodyBytes` in all. */
function anonymousHead(bodyBytes: number): { head: Buffer; filler: number } {
  const partHead = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\n`;
  const tail = `\r\n--${BOUNDARY}--\r\n`;
  const head = `POST /base/ HTTP/1.1\r\nhost: x\r\ncontent-type: multipart/form-data; boundary=${BOUNDARY}\r\ncontent-length: ${bodyBytes}\r\n\r\n${partHead}`;
  return { head: Buffer.from(head), filler: bodyBytes - partHead.length - tail.length };
}

interface Seen {
  text: string;
  /** The server ended the connection cleanly (FIN). */
  ended: boolean;
  error: string | null;
}

function connect(): Promise<{ socket: net.Socket; seen: Seen; closed: Promise<void> }> {
  const { hostname, port } = new URL(srv.upload);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    const seen: Seen = { text: '', ended: false, error: null };
    socket.on('data', (d) => (seen.text += d.toString('latin1')));
    socket.on('end', () => (seen.ended = true));
    socket.on('error', (e: NodeJS.ErrnoException) => (seen.error = e.code ?? e.message));
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.once('connect', () => resolve({ socket, seen, closed }));
  });
}

/** Writes `n` bytes of filler, respecting backpressure, until done, `stop()` says so or the socket ends. */
async function writeFiller(socket: net.Socket, n: number, stop: () => boolean): Promise<number> {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  let sent = 0;
  while (sent < n && !stop() && socket.writable) {
    const piece = chunk.subarray(0, Math.min(chunk.length, n - sent));
    sent += piece.length;
    if (!socket.write(piece)) {
      // Whichever comes first: room to write, an answer (data), or the end of the connection.
      await new Promise<void>((r) => {
        const done = () => {
          for (const e of ['drain', 'data', 'end', 'close'] as const) socket.off(e, done);
          r();
        };
        for (const e of ['drain', 'data', 'end', 'close'] as const) socket.once(e, done);
      });
    }
  }
  return sent;
}

const waitFor = async (check: () => boolean, ms: number) => {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return check();
};

describe('answers before the body is read', () => {
  it('a small refused body is drained: the 403 arrives and the kept-alive connection answers the next request', async () => {
    const { socket, seen } = await connect();
    const { head, filler } = anonymousHead(2 * 1024 * 1024);
    socket.write(head);
    await writeFiller(socket, filler, () => false);
    socket.write(`\r\n--${BOUNDARY}--\r\n`);
    expect(await waitFor(() => /\r\n\r\n/.test(seen.text), 20_000), 'an answer').toBe(true);
    expect(seen.text).toMatch(/^HTTP\/1\.1 403 /);
    expect(seen.text).not.toMatch(/connection: close/i);
    const before = seen.text.length;
    socket.write('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n');
    expect(await waitFor(() => seen.text.length > before && /\r\n\r\n/.test(seen.text.slice(before)), 20_000), 'an answer to the next request').toBe(true);
    expect(seen.text.slice(before)).toMatch(/^HTTP\/1\.1 200 /);
    expect(seen.error).toBeNull();
    socket.destroy();
  });

  it('a large refused body: 403 with Connection: close, then a clean close once the client stops sending', async () => {
    const { socket, seen, closed } = await connect();
    const { head, filler } = anonymousHead(200 * 1024 * 1024);
    socket.write(head);
    // A client that stops sending once the answer arrives (as browsers, curl and undici do).
    const sent = await writeFiller(socket, filler, () => seen.text.length > 0);
    expect(await waitFor(() => /\r\n\r\n/.test(seen.text), 20_000), 'an answer').toBe(true);
    expect(seen.text).toMatch(/^HTTP\/1\.1 403 /);
    expect(seen.text).toMatch(/connection: close/i);
    expect(sent, 'bytes sent before the answer').toBeLessThan(100 * 1024 * 1024);
    // The server half-closes after the answer; the client closes its side too.
    expect(await waitFor(() => seen.ended, 20_000), 'the server ended the connection').toBe(true);
    socket.end();
    await closed;
    expect(seen.error, 'no reset').toBeNull();
  });
});
