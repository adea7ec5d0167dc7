/**
 * Who an S3 request comes from: throttled by client address first (as the Upload API is), then its
 * Signature V4 checked against the secret keys of the project its access key id names, then
 * throttled by project. Unsigned requests are refused.
 */
import type { AppContext } from '../context.js';
import type { ProjectRow } from '../projects/service.js';
import type { RateLimiter } from '../throttle/limiter.js';
import { nodeLimiter } from '../throttle/redis.js';
import { s3Error } from '../http/s3/errors.js';
import { accessDenied, readSignature, verifySignature, type SigningContext, type SignedRequest } from './sigv4.js';
import type { S3Request } from './request.js';

const PUBLIC_KEY_SYNTAX = /^[A-Za-z0-9_-]{4,64}$/;

export interface Caller {
  project: ProjectRow;
  signed: SignedRequest;
  signing: SigningContext;
}

export class S3Auth {
  private readonly byClient: RateLimiter;
  private readonly byProject: RateLimiter;

  constructor(private readonly ctx: AppContext) {
    this.byClient = nodeLimiter(ctx, 's3-ip', { perSec: ctx.config.rateUploadIpPerSec, burst: ctx.config.rateUploadIpBurst });
    this.byProject = nodeLimiter(ctx, 's3', { perSec: ctx.config.rateUploadPerSec, burst: ctx.config.rateUploadBurst });
  }

  async authenticate(r: S3Request, clientAddress: string): Promise<Caller> {
    await spend(this.byClient, `ip:${clientAddress}`);
    const signed = readSignature(r.req, r.query);
    if (!signed) throw accessDenied('Anonymous requests are not accepted: sign with the project\'s public key and a secret key.');
    if (!PUBLIC_KEY_SYNTAX.test(signed.accessKey)) throw invalidAccessKey();
    const caller = await this.ctx.projects.withKeys(signed.accessKey, async (found) => {
      if (!found) throw invalidAccessKey();
      const signing = verifySignature(r.req, signed, found.secrets, r.rawPath, r.decodedPath, r.rawQuery);
      return { project: found.project, signed, signing };
    });
    await spend(this.byProject, `project:${caller.project.id}`);
    return caller;
  }
}

const invalidAccessKey = () => s3Error(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');

async function spend(limiter: RateLimiter, bucket: string): Promise<void> {
  const d = limiter.takeNow ? limiter.takeNow(bucket) : await limiter.take(bucket);
  if (!d.allowed) throw s3Error(503, 'SlowDown', 'Please reduce your request rate.', { 'retry-after': String(d.retryAfterS) });
}
