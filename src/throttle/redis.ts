/**
 * Token buckets in Redis, so N nodes behind a load balancer enforce one limit per project. The
 * bucket update is one Lua script (atomic), timed by the Redis server's clock so nodes with skewed
 * clocks agree. When Redis does not answer, requests are let through (and a warning logged at most
 * once a minute): throttling protects the service, it must not take it down.
 */
import crypto from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { AppContext } from '../context.js';
import { createLimiter, type BucketOptions, type Decision, type RateLimiter } from './limiter.js';

const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local s = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(s[1])
local at = tonumber(s[2])
if tokens == nil or at == nil then tokens = burst; at = now end
tokens = math.min(burst, tokens + math.max(0, now - at) / 1000 * rate)
local allowed = 0
if tokens >= 1 then tokens = tokens - 1; allowed = 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
if allowed == 1 then return {1, 0} end
return {0, math.max(1, math.ceil((1 - tokens) / rate))}
`;

export class RedisTokenBucketLimiter implements RateLimiter {
  private lastWarnMs = 0;

  constructor(
    private readonly redis: Redis,
    private readonly opts: Pick<BucketOptions, 'perSec' | 'burst'>,
    private readonly prefix: string,
    private readonly log: Logger,
  ) {}

  async take(key: string): Promise<Decision> {
    try {
      const [allowed, retry] = (await this.redis.eval(SCRIPT, 1, `${this.prefix}${key}`, String(this.opts.perSec), String(this.opts.burst))) as [number, number];
      return allowed === 1 ? { allowed: true } : { allowed: false, retryAfterS: retry };
    } catch (err) {
      if (Date.now() - this.lastWarnMs > 60_000) {
        this.lastWarnMs = Date.now();
        this.log.warn({ err: (err as Error).message }, 'redis unavailable: throttling lets requests through');
      }
      return { allowed: true };
    }
  }
}

/** The limiter a node uses: Redis-backed when STOWAGE_REDIS_URL is set, in-process otherwise. */
export function nodeLimiter(ctx: AppContext, name: string, opts: Pick<BucketOptions, 'perSec' | 'burst'>): RateLimiter {
  const redis = ctx.redis;
  if (!redis || opts.perSec <= 0) return createLimiter(opts);
  return new RedisTokenBucketLimiter(redis, opts, `${deploymentPrefix(ctx)}rl:${name}:`, ctx.log);
}

/** Keys of one deployment (its metadata store) never meet another's on a shared Redis. */
export function deploymentPrefix(ctx: AppContext): string {
  const id = crypto.createHash('sha256').update(`${ctx.config.databaseUrl || ctx.config.dataDir}\n${ctx.config.databaseSchema ?? ''}`).digest('hex').slice(0, 16);
  return `stowage:${id}:`;
}
