/**
 * The node's one Redis connection (STOWAGE_REDIS_URL), opened by app.ts and handed out as
 * `ctx.redis`: the throttling counters and the CDN's cross-node render locks share it. Commands fail
 * fast while Redis is away (no offline queue), so callers can degrade to per-node behaviour instead
 * of hanging requests.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** Null when no Redis is configured (the client library is loaded only when one is). */
export async function openRedis(url: string | undefined, log: Logger): Promise<Redis | null> {
  if (!url) return null;
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, commandTimeout: 2000, lazyConnect: false });
  // Errors surface on each command; the connection-level ones would otherwise be unhandled.
  redis.on('error', (err: Error) => log.debug({ err: err.message }, 'redis connection error'));
  return redis;
}

/**
 * Waits (bounded) for the first connection at start, so the first requests already count in
 * Redis; a node whose Redis is away still starts and degrades to letting requests through.
 */
export async function waitForRedis(redis: Redis | null, log: Logger, timeoutMs = 3000): Promise<void> {
  if (!redis || redis.status === 'ready') return;
  const ok = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  if (!ok) log.warn('redis not reachable at start: throttling is per node and CDN renders are not coordinated until it is');
}

export async function closeRedis(redis: Redis | null): Promise<void> {
  if (!redis) return;
  await redis.quit().catch(() => redis.disconnect());
}
