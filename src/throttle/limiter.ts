/**
 * Rate limiting behind a small interface: the in-process token bucket below serves one node; a
 * shared implementation (e.g. Redis, for N nodes behind a load balancer) only has to implement
 * `take`. Callers never know which one they hold.
 */

export type Decision = { allowed: true } | { allowed: false; retryAfterS: number };

export interface RateLimiter {
  /** Spends one request for `key` now; when refused, says how many whole seconds until one is free. */
  take(key: string): Promise<Decision>;
  /** The same without a promise, offered by limiters that decide in process (no Redis round trip). */
  takeNow?(key: string): Decision;
}

export interface BucketOptions {
  /** Sustained rate (tokens added per second). 0 or less: no limit at all. */
  perSec: number;
  /** Bucket size: requests allowed at once after a quiet period. */
  burst: number;
  /** Most keys remembered; idle (full) buckets are dropped first. */
  maxKeys?: number;
  /** Injectable clock in ms (tests of the limiter itself). */
  now?: () => number;
}

interface Bucket {
  tokens: number;
  atMs: number;
}

const ALLOWED: Decision = { allowed: true };
const ALWAYS: RateLimiter = { take: async () => ALLOWED, takeNow: () => ALLOWED };

export function createLimiter(opts: BucketOptions): RateLimiter {
  return opts.perSec > 0 ? new TokenBucketLimiter(opts) : ALWAYS;
}

/** Classic token bucket per key, refilled lazily on each take (no timers). */
export class TokenBucketLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly maxKeys: number;
  private readonly now: () => number;

  constructor(private readonly opts: BucketOptions) {
    this.maxKeys = opts.maxKeys ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  async take(key: string): Promise<Decision> {
    return this.takeNow(key);
  }

  takeNow(key: string): Decision {
    const now = this.now();
    const b = this.refill(this.buckets.get(key), now);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      this.remember(key, b, now);
      return ALLOWED;
    }
    this.remember(key, b, now);
    // Whole seconds, at least 1: clients sleep Retry-After seconds, and 0 would make them hammer us.
    return { allowed: false, retryAfterS: Math.max(1, Math.ceil((1 - b.tokens) / this.opts.perSec)) };
  }

  private refill(b: Bucket | undefined, now: number): Bucket {
    if (!b) return { tokens: this.opts.burst, atMs: now };
    const tokens = Math.min(this.opts.burst, b.tokens + ((now - b.atMs) / 1000) * this.opts.perSec);
    return { tokens, atMs: now };
  }

  /** Keeps the map bounded: a full bucket is the same as no bucket, so those go first. */
  private remember(key: string, b: Bucket, now: number): void {
    this.buckets.delete(key);
    this.buckets.set(key, b);
    if (this.buckets.size <= this.maxKeys) return;
    for (const [k, v] of this.buckets) {
      if (this.refill(v, now).tokens >= this.opts.burst) this.buckets.delete(k);
    }
    // Still too many busy keys: forget the least recently used (Map keeps insertion order).
    for (const k of this.buckets.keys()) {
      if (this.buckets.size <= this.maxKeys) break;
      this.buckets.delete(k);
    }
  }
}
