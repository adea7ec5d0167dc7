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
  /** The key moved to the end of `buckets` last. */
  private lastKey: string | null = null;

  constructor(private readonly opts: BucketOptions) {
    this.maxKeys = opts.maxKeys ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  async take(key: string): Promise<Decision> {
    return this.takeNow(key);
  }

  takeNow(key: string): Decision {
    const now = this.now();
    const held = this.buckets.get(key);
    // A held bucket is refilled in place: every REST read takes one (no object per request).
    const b = held ?? { tokens: this.opts.burst, atMs: now };
    b.tokens = this.tokensAt(b, now);
    b.atMs = now;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      this.remember(key, b, held !== undefined, now);
      return ALLOWED;
    }
    this.remember(key, b, held !== undefined, now);
    // Whole seconds, at least 1: clients sleep Retry-After seconds, and 0 would make them hammer us.
    return { allowed: false, retryAfterS: Math.max(1, Math.ceil((1 - b.tokens) / this.opts.perSec)) };
  }

  /** A bucket's tokens at `now`, refilled lazily since it was last taken from. */
  private tokensAt(b: Bucket, now: number): number {
    return Math.min(this.opts.burst, b.tokens + ((now - b.atMs) / 1000) * this.opts.perSec);
  }

  /**
   * Keeps the map in least-recently-used order and bounded: a full bucket is the same as no bucket,
   * so those go first. The key taken last is already at the end (the common case, one busy
   * project): moving it again (a delete and a set per request) would change nothing.
   */
  private remember(key: string, b: Bucket, held: boolean, now: number): void {
    if (held && key === this.lastKey) return;
    this.buckets.delete(key);
    this.buckets.set(key, b);
    this.lastKey = key;
    if (this.buckets.size <= this.maxKeys) return;
    for (const [k, v] of this.buckets) {
      if (this.tokensAt(v, now) >= this.opts.burst) this.buckets.delete(k);
    }
    // Still too many busy keys: forget the least recently used (Map keeps insertion order).
    for (const k of this.buckets.keys()) {
      if (this.buckets.size <= this.maxKeys) break;
      this.buckets.delete(k);
    }
  }
}
