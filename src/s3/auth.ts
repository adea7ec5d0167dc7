/**
 * Who an S3 request comes from: throttled by client address first (as the Upload API is), then its
 * Signature V4 checked against the secret keys of the project its access key id names, then
 * throttled by project. Unsigned requests are refused. A request repeated byte for byte is not
 * hashed again against the same keys (verified.ts).
 */
import type { AppContext } from '../context.js';
import type { ProjectRow } from '../projects/service.js';
import type { Decision, RateLimiter } from '../throttle/limiter.js';
import { nodeLimiter } from '../throttle/redis.js';
import { AppError } from '../core/errors.js';
import { s3Error } from '../http/s3/errors.js';
import { accessDenied, readSignature, verifySignature, type SigningContext, type SignedRequest } from './sigv4.js';
import type { S3Request } from './request.js';
import { VerifiedRequests } from './verified.js';

const PUBLIC_KEY_SYNTAX = /^[A-Za-z0-9_-]{4,64}$/;

export interface Caller {
  project: ProjectRow;
  signed: SignedRequest;
  signing: SigningContext;
}

export class S3Auth {
  private readonly byClient: RateLimiter;
  private readonly byProject: RateLimiter;
  private readonly verified = new VerifiedRequests<SigningContext>();

  constructor(private readonly ctx: AppContext) {
    this.byClient = nodeLimiter(ctx, 's3-ip', { perSec: ctx.config.rateUploadIpPerSec, burst: ctx.config.rateUploadIpBurst });
    this.byProject = nodeLimiter(ctx, 's3', { perSec: ctx.config.rateUploadPerSec, burst: ctx.config.rateUploadBurst });
  }

  /**
   * The caller, throttled and verified; without a promise when this node can tell at once (an
   * in-process limiter, the project's keys cached and the signature good against them), else the
   * promise of the same checks with the keys read afresh when the cached ones refuse (a key added a
   * moment ago, maybe on another node, works at once).
   */
  authenticate(r: S3Request, clientAddress: string): Caller | Promise<Caller> {
    const byClient = spendNow(this.byClient, this.clientBucket(clientAddress));
    if (byClient !== undefined) return byClient.then(() => this.signed(r));
    return this.signed(r);
  }

  /** The last client's and project's bucket names, kept: consecutive requests mostly come from the same ones. */
  private lastClient = { address: '', bucket: 'ip:' };
  private lastProject = { id: -1, bucket: '' };

  private clientBucket(address: string): string {
    if (this.lastClient.address !== address) this.lastClient = { address, bucket: `ip:${address}` };
    return this.lastClient.bucket;
  }

  private projectBucket(id: number): string {
    if (this.lastProject.id !== id) this.lastProject = { id, bucket: `project:${id}` };
    return this.lastProject.bucket;
  }

  private signed(r: S3Request): Caller | Promise<Caller> {
    const signed = readSignature(r.req, r.query);
    if (!signed) throw accessDenied('Anonymous requests are not accepted: sign with the project\'s public key and a secret key.');
    if (!PUBLIC_KEY_SYNTAX.test(signed.accessKey)) throw invalidAccessKey();
    const cached = this.ctx.projects.cached(signed.accessKey);
    const caller = cached === undefined ? null : this.verifiedAtOnce(r, signed, cached);
    if (caller === null) return this.withKeys(r, signed).then((c) => this.throttled(c));
    return this.throttled(caller);
  }

  /** The caller when the cached keys verify the signature; null when only keys read afresh can tell. */
  private verifiedAtOnce(r: S3Request, signed: SignedRequest, found: { project: ProjectRow; secrets: string[] }): Caller | null {
    try {
      return { project: found.project, signed, signing: this.verify(r, signed, found.secrets) };
    } catch (err) {
      if (isRefusal(err)) return null;
      throw err;
    }
  }

  private withKeys(r: S3Request, signed: SignedRequest): Promise<Caller> {
    return this.ctx.projects.withKeys(signed.accessKey, async (found) => {
      if (!found) throw invalidAccessKey();
      return { project: found.project, signed, signing: this.verify(r, signed, found.secrets) };
    });
  }

  private verify(r: S3Request, signed: SignedRequest, secrets: readonly string[]): SigningContext {
    return verifySignature(r.req, signed, secrets, r.parsed, this.verified);
  }

  private throttled(caller: Caller): Caller | Promise<Caller> {
    const byProject = spendNow(this.byProject, this.projectBucket(caller.project.id));
    return byProject === undefined ? caller : byProject.then(() => caller);
  }
}

const invalidAccessKey = () => s3Error(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');

/** A refusal the keys read afresh might turn (the same test as the projects' `withKeys`). */
const isRefusal = (err: unknown): boolean => err instanceof AppError && (err.status === 401 || err.status === 403);

/** Spends one request of `bucket`: at once (undefined) with an in-process limiter, else the promise of it; throws or rejects SlowDown. */
function spendNow(limiter: RateLimiter, bucket: string): Promise<void> | undefined {
  if (limiter.takeNow) return void admit(limiter.takeNow(bucket));
  return limiter.take(bucket).then(admit);
}

function admit(d: Decision): void {
  if (!d.allowed) throw s3Error(503, 'SlowDown', 'Please reduce your request rate.', { 'retry-after': String(d.retryAfterS) });
}
