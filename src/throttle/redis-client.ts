/**
 * One Redis connection per node (STOWAGE_REDIS_URL), shared by the throttling counters and the CDN's
 * cross-node render locks. Commands fail fast while Redis is away (no offline queue), so callers
 * can degrade to per-node behaviour instead of hanging requests.
 */
import { Redis } from 'ioredis';
import type { AppContext } from '../context.js';

const clients = new WeakMap<AppContext, Redis>();

export function redisClient(ctx: AppContext): Redis | null {
  if (!ctx.config.redisUrl) return null;
  let c = clients.get(ctx);
  if (!c) {
    c = new Redis(ctx.config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, commandTimeout: 2000, lazyConnect: false });
    // Errors surface on each command; the connection-level ones would otherwise be unhandled.
    c.on('error', (err: Error) => ctx.log.debug({ err: err.message }, 'redis connection error'));
    clients.set(ctx, c);
  }
  return c;
}

export async function closeRedis(ctx: AppContext): Promise<void> {
  const c = clients.get(ctx);
  if (!c) return;
  clients.delete(ctx);
  await c.quit().catch(() => c.disconnect());
}

/**
 * Waits (bounded) for the first connection at start, so the first requests already count in
 * Redis; a node whose Redis is away still starts and degrades to letting requests through.
 */
export async function connectRedis(ctx: AppContext, timeoutMs = 3000): Promise<void> {
  const c = redisClient(ctx);
  if (!c || c.status === 'ready') return;
  const ok = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    c.once('ready', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  if (!ok) ctx.log.warn('redis not reachable at start: throttling is per node and CDN renders are not coordinated until it is');
}
