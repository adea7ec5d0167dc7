import { describe, expect, it } from 'vitest';
import { TokenBucketLimiter } from '../../src/throttle/limiter.js';

describe('in-process token buckets', () => {
  it('forgets the least recently used busy key, however often the last key repeats', () => {
    // A clock that never moves: no bucket refills, so a bucket's tokens say whether it was forgotten.
    const limiter = new TokenBucketLimiter({ perSec: 1, burst: 2, maxKeys: 2, now: () => 1_000 });
    const allowed = (key: string) => limiter.takeNow(key).allowed;
    expect([allowed('a'), allowed('b'), allowed('a')]).toEqual([true, true, true]); // order b, a
    expect(allowed('a')).toBe(false); // a again: already the last key (nothing moves); still spent
    expect(allowed('c')).toBe(true); // three busy keys: b, the least recently used, goes
    expect(allowed('a')).toBe(false); // a was kept, spent (order c, a)
    expect(allowed('b')).toBe(true); // b starts over with a full bucket; c goes
    expect(allowed('b')).toBe(true);
    expect(allowed('b')).toBe(false);
    expect(allowed('a')).toBe(false); // a kept throughout
    expect(allowed('c')).toBe(true); // c forgotten: a full bucket again
  });

  it('refills a held bucket by the time since its last take, up to the burst', () => {
    let now = 0;
    const limiter = new TokenBucketLimiter({ perSec: 2, burst: 2, now: () => now });
    expect([limiter.takeNow('k'), limiter.takeNow('k')].every((d) => d.allowed)).toBe(true);
    expect(limiter.takeNow('k')).toEqual({ allowed: false, retryAfterS: 1 });
    now = 500; // one token back
    expect(limiter.takeNow('k').allowed).toBe(true);
    expect(limiter.takeNow('k').allowed).toBe(false);
    now = 10_000; // long idle: full, not more
    expect([limiter.takeNow('k'), limiter.takeNow('k'), limiter.takeNow('k')].map((d) => d.allowed)).toEqual([true, true, false]);
  });
});
