/**
 * The response half of the outbound client: error classification and the size-capped body.
 * Kept apart from outbound.ts so the request/redirect/SSRF logic reads on its own.
 */
import type { Dispatcher } from 'undici';
import { AppError } from '../core/errors.js';
import { downloadErrors } from '../core/error-catalogue/download.js';

export interface OutboundResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** URL of the last hop (after redirects). */
  finalUrl: string;
  /** Declared Content-Length, or null when absent/invalid. */
  contentLength: number | null;
  /**
   * The body, once. Throws DownloadFileSizeLimitExceededError when the declared length or the
   * bytes read exceed the cap, DownloadFileTimeLimitExceededError past the deadline.
   */
  body: AsyncIterable<Uint8Array>;
  /** Up to maxChars characters of the body as UTF-8; never throws for size (it truncates). */
  text(maxChars: number): Promise<string>;
  /** Drops the body and frees the connection; call it when the body is not wanted. */
  discard(): Promise<void>;
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

export function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v.join(', ') : v;
}

/** Our own AppErrors (from the lookup hook) may arrive wrapped by undici; unwrap, else classify. */
export function mapError(err: unknown, timedOut: boolean): AppError {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof AppError) return e;
  }
  if (timedOut) return downloadErrors.timeout();
  const code = String((err as { code?: unknown }).code ?? '');
  if (TIMEOUT_CODES.has(code)) return downloadErrors.timeout();
  return downloadErrors.network(code || 'connection failed');
}

/**
 * Frees the connection of a body we stop reading. undici errors a body destroyed before its end
 * (RequestAbortedError); nobody listens any more, so swallow it rather than crash the process.
 */
function release(stream: Dispatcher.ResponseData['body']): void {
  if (stream.destroyed) return;
  stream.on('error', () => undefined);
  stream.destroy();
}

export function wrapResponse(
  res: Dispatcher.ResponseData,
  finalUrl: string,
  maxBytes: number,
  timedOut: () => boolean,
  done: () => void,
): OutboundResponse {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = headerValue(v)!;
  const declared = headers['content-length'] !== undefined ? Number(headers['content-length']) : NaN;
  const contentLength = Number.isSafeInteger(declared) && declared >= 0 ? declared : null;
  let used = false;
  const take = () => {
    if (used) throw new Error('OutboundResponse body can be read only once');
    used = true;
    return res.body;
  };

  async function* capped(): AsyncGenerator<Uint8Array> {
    const stream = take();
    try {
      if (contentLength !== null && contentLength > maxBytes) throw downloadErrors.tooBig(contentLength, maxBytes);
      let total = 0;
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        total += chunk.length;
        if (total > maxBytes) throw downloadErrors.tooBig(total, maxBytes);
        yield chunk;
      }
    } catch (err) {
      throw mapError(err, timedOut());
    } finally {
      release(stream);
      done();
    }
  }

  return {
    status: res.statusCode,
    headers,
    finalUrl,
    contentLength,
    body: { [Symbol.asyncIterator]: () => capped() },
    async text(maxChars) {
      const stream = take();
      const limit = Math.min(maxBytes, maxChars * 4); // UTF-8 needs at most 4 bytes per character
      let parts: Buffer[];
      try {
        parts = await readUpTo(stream, limit);
      } catch (err) {
        throw mapError(err, timedOut());
      } finally {
        release(stream);
        done();
      }
      return Buffer.concat(parts).subarray(0, limit).toString('utf8').slice(0, maxChars);
    },
    async discard() {
      if (!used) {
        used = true;
        await res.body.dump().catch(() => undefined);
      }
      done();
    },
  };
}

/**
 * The stream's chunks until its end or until they hold `limit` bytes, by its events: an async
 * iterator (`for await`) made several promises per response, a few per cent of a webhook
 * delivery's CPU, where the answer is mostly one small chunk. Fails as the iterator did when the
 * stream errors or closes before its end.
 */
function readUpTo(stream: Dispatcher.ResponseData['body'], limit: number): Promise<Buffer[]> {
  const premature = () => Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
  if (stream.readableEnded) return Promise.resolve([]);
  if (stream.destroyed) return Promise.reject(stream.errored ?? premature());
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let total = 0;
    const finish = (err: Error | null) => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', finish);
      stream.off('close', onClose);
      if (err) reject(err);
      else resolve(parts);
    };
    const onData = (chunk: Buffer) => {
      parts.push(chunk);
      total += chunk.length;
      if (total >= limit) {
        stream.pause();
        finish(null);
      }
    };
    const onEnd = () => finish(null);
    const onClose = () => finish(premature());
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', finish);
    stream.on('close', onClose);
  });
}
