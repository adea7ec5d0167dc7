/** A multipart request written by hand, part by part, for the suites that need a body kept open. */
import crypto from 'node:crypto';
import http from 'node:http';
import { bytes } from './helpers.js';

const KIB = 1024;

export interface Answer {
  status: number;
  text: string;
}

/** A multipart request (e.g. to /base/) written by hand, part by part, whose body stays open until end(). */
export class StreamedUpload {
  readonly boundary = `b${crypto.randomBytes(8).toString('hex')}`;
  readonly answer: Promise<Answer>;
  answered = false;
  private readonly req: http.ClientRequest;

  /** `url`: the endpoint with its query string, e.g. `${srv.upload}/base/?UPLOADCARE_PUB_KEY=…`. */
  constructor(url: string, headers: Record<string, string> = {}) {
    this.req = http.request(url, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${this.boundary}`, ...headers },
    });
    // Writes after an early answer may fail (EPIPE, reset): the answer is what the test reads.
    this.req.on('error', () => undefined);
    this.answer = new Promise((resolve, reject) => {
      this.req.on('response', (res) => {
        this.answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
    });
  }

  field(name: string, value: string): Promise<void> {
    return this.write(Buffer.from(`--${this.boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }

  /** Opens a file part and sends `size` bytes of it (stops early once the server has answered). */
  async file(size: number, name = 'file'): Promise<void> {
    await this.write(Buffer.from(`--${this.boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${name}.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`));
    const data = bytes(size, 7);
    for (let at = 0; at < size && !this.answered; at += 64 * KIB) await this.write(data.subarray(at, at + 64 * KIB));
    await this.write(Buffer.from('\r\n'));
  }

  async end(): Promise<Answer> {
    this.req.end(`--${this.boundary}--\r\n`);
    return this.answer;
  }

  destroy(): void {
    this.req.destroy();
  }

  /** Writes unless the server has answered; resolves when the socket took the chunk (or soon after an answer). */
  private write(chunk: Buffer): Promise<void> {
    if (this.answered || this.req.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => resolve();
      if (this.req.write(chunk)) return done();
      this.req.once('drain', done);
      void this.answer.then(done, done);
    });
  }
}
