/**
 * Throttling hooks for the REST and Upload surfaces. Each answers 429 with `Retry-After` in the
 * form the official clients retry on: REST `{"detail":"Request was throttled. Expected available
 * in N seconds."}`, Upload `RequestThrottledError` (plain text or the jsonerrors envelope).
 */
import type { FastifyRequest } from 'fastify';
import { AppError } from '../core/errors.js';
import type { AppContext } from '../context.js';
import type { RateLimiter } from './limiter.js';
import { nodeLimiter } from './redis.js';

export function restLimiter(ctx: AppContext): RateLimiter {
  return nodeLimiter(ctx, 'rest', { perSec: ctx.config.rateRestPerSec, burst: ctx.config.rateRestBurst });
}

export function uploadLimiter(ctx: AppContext): RateLimiter {
  return nodeLimiter(ctx, 'upload', { perSec: ctx.config.rateUploadPerSec, burst: ctx.config.rateUploadBurst });
}

/** REST: runs after authentication, so the bucket is the project's. */
export async function throttleRest(limiter: RateLimiter, projectId: number): Promise<void> {
  const d = await limiter.take(`rest:${projectId}`);
  if (!d.allowed) {
    throw new AppError(429, 'Throttled', `Request was throttled. Expected available in ${d.retryAfterS} seconds.`, { 'retry-after': String(d.retryAfterS) });
  }
}

/** Requests the Upload surface never throttles: preflights and pre-signed part PUTs (like S3's). */
function exempt(req: FastifyRequest): boolean {
  return req.method === 'OPTIONS' || (req.method === 'PUT' && req.url.startsWith('/multipart/upload/'));
}

const PUB_KEY_FIELDS = ['pub_key', 'UPLOADCARE_PUB_KEY', 'SVC_PUB_KEY'];

/**
 * The project a request counts against, before the handler runs: the public key from the query or
 * a urlencoded body; else from the SDK's client header (`…/<ver>/<pubkey> (…)`), which the JS SDK
 * sends with multipart bodies whose key field comes after the file; else the client address.
 */
export function uploadThrottleKey(req: FastifyRequest): string {
  const sources = [req.query, req.body].filter((s): s is Record<string, unknown> => typeof s === 'object' && s !== null && !isStream(s));
  for (const src of sources) {
    for (const f of PUB_KEY_FIELDS) {
      const v = src[f];
      if (typeof v === 'string' && v) return `pub:${v}`;
    }
  }
  const ua = req.headers['x-uc-user-agent'] ?? req.headers['user-agent'];
  const m = typeof ua === 'string' ? /^[\w.-]+\/[\w.-]+\/([\w-]+)/.exec(ua) : null;
  if (m?.[1]) return `pub:${m[1]}`;
  return `ip:${req.ip}`;
}

function isStream(v: object): boolean {
  return typeof (v as { pipe?: unknown }).pipe === 'function';
}

export async function throttleUpload(limiter: RateLimiter, req: FastifyRequest): Promise<void> {
  if (exempt(req)) return;
  const d = await limiter.take(uploadThrottleKey(req));
  if (!d.allowed) throw new AppError(429, 'RequestThrottledError', 'Request was throttled.', { 'retry-after': String(d.retryAfterS) });
}
