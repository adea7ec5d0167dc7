/**
 * The source of an import: any server speaking the REST API (the hosted service or another
 * Stowage). REST calls are signed (HMAC-SHA1, never the secret on the wire, so plain HTTP works);
 * file bytes are streamed from the CDN.
 */
import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import { Agent, interceptors, request, type Dispatcher } from 'undici';
import { HttpStatusError, parseRetryAfter, PermanentError, withRetries, type RetryPolicy } from './retry.js';

export interface SourceOptions {
  restBase: string;
  pubKey: string;
  secretKey: string;
  retry: RetryPolicy;
  /** Called before each retry (the progress line counts them). */
  onRetry?: (err: unknown) => void;
}

/** A page of the REST API is small; anything far bigger is not one. */
const MAX_JSON_BYTES = 32 * 1024 * 1024;
const ACCEPT = 'application/vnd.uploadcare-v0.7+json';

export class SourceClient {
  private readonly rest: URL;
  private readonly agent: Dispatcher;

  constructor(private readonly opts: SourceOptions) {
    this.rest = httpUrl(opts.restBase.replace(/\/*$/, '/'), '--from-rest');
    // Idle limits, not totals: a large file may take long, a silent connection may not.
    this.agent = new Agent({ headersTimeout: 60_000, bodyTimeout: 120_000, connect: { timeout: 30_000 } }).compose(interceptors.redirect({ maxRedirections: 5 }));
  }

  /** GET of a REST path (`files/?limit=100`) or of a `next` link the source gave; retried. */
  getJson(pathOrUrl: string): Promise<unknown> {
    const url = new URL(pathOrUrl, this.rest);
    // Signed requests go to the source we were given, wherever its links point.
    if (url.origin !== this.rest.origin) throw new PermanentError(`the source linked to another host: ${url.href}`);
    return withRetries(this.opts.retry, () => this.fetchJson(url), this.opts.onRetry);
  }

  private async fetchJson(url: URL): Promise<unknown> {
    const uri = url.pathname + url.search;
    const date = new Date().toUTCString();
    const contentType = 'application/json';
    const signature = sign(this.opts.secretKey, ['GET', md5(''), contentType, date, uri].join('\n'));
    const res = await request(url, {
      method: 'GET',
      dispatcher: this.agent,
      headers: { accept: ACCEPT, 'content-type': contentType, date, authorization: `Uploadcare ${this.opts.pubKey}:${signature}` },
    });
    if (res.statusCode !== 200) {
      await res.body.dump();
      throw statusError(res.statusCode, `GET ${uri}`, res.headers['retry-after']);
    }
    const text = await readCapped(res.body, MAX_JSON_BYTES, uri);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new PermanentError(`GET ${uri}: the answer is not JSON`);
    }
  }

  /** Opens the bytes at a CDN URL (one try: the caller retries the whole copy). */
  async download(rawUrl: string): Promise<Readable> {
    const url = httpUrl(rawUrl, 'file URL');
    const res = await request(url, { method: 'GET', dispatcher: this.agent });
    if (res.statusCode !== 200) {
      await res.body.dump();
      throw statusError(res.statusCode, `GET ${url.href}`, res.headers['retry-after']);
    }
    return res.body;
  }

  /** The strong ETag at a CDN URL, or null when it has none; retried. */
  etag(rawUrl: string): Promise<string | null> {
    const url = httpUrl(rawUrl, 'file URL');
    return withRetries(
      this.opts.retry,
      async () => {
        const res = await request(url, { method: 'HEAD', dispatcher: this.agent });
        await res.body.dump();
        if (res.statusCode !== 200) throw statusError(res.statusCode, `HEAD ${url.href}`, res.headers['retry-after']);
        const tag = res.headers['etag'];
        const text = Array.isArray(tag) ? tag[0] : tag;
        return text && !text.startsWith('W/') ? text.replace(/"/g, '') : null;
      },
      this.opts.onRetry,
    );
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

function statusError(status: number, what: string, retryAfter: string | string[] | undefined): HttpStatusError {
  return new HttpStatusError(status, what, parseRetryAfter(retryAfter));
}

function httpUrl(text: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new PermanentError(`${what} is not a URL: ${text}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new PermanentError(`${what} must be http(s): ${text}`);
  return url;
}

async function readCapped(body: AsyncIterable<Buffer>, max: number, what: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) throw new PermanentError(`GET ${what}: the answer is over ${max} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const md5 = (text: string): string => crypto.createHash('md5').update(text).digest('hex');
const sign = (secret: string, text: string): string => crypto.createHmac('sha1', secret).update(text).digest('hex');
