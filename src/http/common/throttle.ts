/**
 * Throttling hooks for the REST and Upload surfaces. Each answers 429 with `Retry-After` in the
 * form the official clients retry on: REST `{"detail":"Request was throttled. Expected available
 * in N seconds."}`, Upload `RequestThrottledError` (plain text or the jsonerrors envelope).
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { Decision, RateLimiter } from '../../throttle/limiter.js';
import { nodeLimiter } from '../../throttle/redis.js';
import { sdkHeaderKey } from '../upload/params.js';
import { restErrors } from '../../core/error-catalogue/rest.js';
import { uploadErrors } from '../../core/error-catalogue/upload.js';

export function restLimiter(ctx: AppContext): RateLimiter {
  return nodeLimiter(ctx, 'rest', { perSec: ctx.config.rateRestPerSec, burst: ctx.config.rateRestBurst });
}

const PUBLIC_KEY_SYNTAX = /^[A-Za-z0-9_-]{4,64}$/;

/** The Upload API's two bucket families: per project (public key) and per client address. */
export interface UploadLimiters {
  project: RateLimiter;
  client: RateLimiter;
  /** Whether a public key names a project (a claim nobody has checked yet). */
  isKnownKey(pubKey: string): Promise<boolean>;
}

export function uploadLimiters(ctx: AppContext): UploadLimiters {
  return {
    project: nodeLimiter(ctx, 'upload', { perSec: ctx.config.rateUploadPerSec, burst: ctx.config.rateUploadBurst }),
    client: nodeLimiter(ctx, 'upload-ip', { perSec: ctx.config.rateUploadIpPerSec, burst: ctx.config.rateUploadIpBurst }),
    // Only well-formed keys reach the database (project keys are 4-64 of A-Z a-z 0-9 _ -).
    isKnownKey: async (pubKey) => PUBLIC_KEY_SYNTAX.test(pubKey) && (await ctx.projects.lookup(pubKey)) !== null,
  };
}

/** REST: runs after authentication, so the bucket is the project's. */
export async function throttleRest(limiter: RateLimiter, projectId: number): Promise<void> {
  restDecision(await limiter.take(restBucket(projectId)));
}

/**
 * `throttleRest` without a promise when the limiter decides in process: true when the request may
 * go on, false when only `throttleRest` can tell (Redis); throws the 429.
 */
export function throttleRestNow(limiter: RateLimiter, projectId: number): boolean {
  if (!limiter.takeNow) return false;
  restDecision(limiter.takeNow(restBucket(projectId)));
  return true;
}

const restBucket = (projectId: number) => `rest:${projectId}`;

function restDecision(d: Decision): void {
  if (!d.allowed) {
    throw restErrors.throttled(d.retryAfterS);
  }
}

/** Requests the Upload surface never throttles: preflights and pre-signed part PUTs (like S3's). */
function exempt(req: FastifyRequest): boolean {
  return req.method === 'OPTIONS' || (req.method === 'PUT' && req.url.startsWith('/multipart/upload/'));
}

/**
 * The public key a request claims before the handler runs: from the query or a urlencoded body;
 * else from the SDK's client header (`…/<ver>/<pubkey> (…)`), which the JS SDK sends with
 * multipart bodies whose key field comes after the file.
 */
export function claimedPublicKey(req: FastifyRequest, keyFields: readonly string[]): string | null {
  const sources = [req.query, req.body].filter((s): s is Record<string, unknown> => typeof s === 'object' && s !== null && !isStream(s));
  for (const src of sources) {
    for (const f of keyFields) {
      const v = src[f];
      if (typeof v === 'string' && v) return v;
    }
  }
  return sdkHeaderKey(req.headers);
}

function isStream(v: object): boolean {
  return typeof (v as { pipe?: unknown }).pipe === 'function';
}

const throttled = uploadErrors.throttled;

/**
 * Every request spends from its client address's bucket first (`req.ip`: the peer, or the
 * X-Forwarded-For client when the peer is a trusted proxy), so neither a fresh random key per
 * request nor a borrowed public key escapes a limit. A key that names a project then also spends
 * from the project's bucket; an unknown key, or none, counts against the address alone.
 * `keyFields`: the public-key field names the endpoints read (http/upload/params.ts).
 */
export async function throttleUpload(limiters: UploadLimiters, req: FastifyRequest, keyFields: readonly string[]): Promise<void> {
  if (exempt(req)) return;
  const byClient = await limiters.client.take(`ip:${req.ip}`);
  if (!byClient.allowed) throw throttled(byClient.retryAfterS);
  const key = claimedPublicKey(req, keyFields);
  if (key === null || !(await limiters.isKnownKey(key))) return;
  const byProject = await limiters.project.take(`pub:${key}`);
  if (!byProject.allowed) throw throttled(byProject.retryAfterS);
}
