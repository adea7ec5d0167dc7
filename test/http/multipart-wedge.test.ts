/**
 * /base/ bodies that wedged the multipart parser (`base-parts-iterator-hang`): a part
 * nobody reads (here an `attachment` disposition, which busboy skips) fills its buffer and ends in
 * the same chunk as the closing delimiter. Before src/http/upload/multipart-parser-fix.ts the
 * parser held that chunk's write forever, so the request was read to the end and never answered,
 * holding a handler and its file descriptors. Each body is sent in one write and stays under the
 * 64 KB a socket read returns, so the parser sees it as one chunk.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';

const srv = useServer({ env: { STOWAGE_RATE_UPLOAD_PER_SEC: '0', STOWAGE_RATE_UPLOAD_IP_PER_SEC: '0' } });

/** Key, a small file, then a skipped part of `skipped` bytes last. */
function wedgingBody(boundary: string, skipped: number): Buffer {
  const part = (headers: string, body: string | Buffer) => [Buffer.from(`--${boundary}\r\n${headers}\r\n\r\n`), Buffer.from(body), Buffer.from('\r\n')];
  return Buffer.concat([
    ...part('Content-Disposition: form-data; name="UPLOADCARE_PUB_KEY"', srv.keys.public_key),
    ...part('Content-Disposition: form-data; name="file"; filename="kept.txt"\r\nContent-Type: text/plain', 'kept'),
    ...part('Content-Disposition: attachment; name="file2"; filename="skipped.bin"', Buffer.alloc(skipped, 0x61)),
    Buffer.from(`--${boundary}--\r\n`),
  ]);
}

/** One request in one write on its own connection: the status line, or null if nothing came back within `waitMs`. */
function postOnce(body: Buffer, boundary: string, waitMs: number): Promise<string | null> {
  const { hostname, port } = new URL(srv.upload);
  const head = `POST /base/ HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: multipart/form-data; boundary=${boundary}\r\ncontent-length: ${body.length}\r\n\r\n`;
  return new Promise((resolve) => {
    let out = '';
    const socket = net.connect(Number(port), hostname, () => socket.write(Buffer.concat([Buffer.from(head), body])));
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(null);
    }, waitMs);
    socket.on('data', (d) => (out += d.toString('latin1')));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(out === '' ? null : out.split('\r\n')[0]!);
    });
    socket.on('error', () => undefined);
  });
}

function tempFiles(): number {
  const dir = path.join(srv.server.dataDir, 'blobs', '.tmp');
  return fs.existsSync(dir) ? fs.readdirSync(dir).length : 0;
}

describe('/base/ multipart parser wedge', () => {
  it('a skipped last part that fills its buffer in the closing chunk: every request answered, nothing left open', async () => {
    // 16 KB is a part's buffer: 20-40 KB skipped fill it within the one chunk.
    const sizes = [20_000, 24_000, 30_000, 36_000, 40_000, 20_001, 33_333, 38_000];
    const answers = await Promise.all(sizes.map((size, i) => postOnce(wedgingBody(`wedge${i}`, size), `wedge${i}`, 20_000)));
    expect(answers).toEqual(sizes.map(() => 'HTTP/1.1 200 OK'));
    // Failed or not, no request still holds a temp file (the staged file became a blob).
    expect(tempFiles()).toBe(0);
  });
});
