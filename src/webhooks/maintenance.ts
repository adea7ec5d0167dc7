/**
 * Housekeeping that keeps the queue and the attempt records small: every period some node (one,
 * thanks to the unique key per period) deletes finished jobs and old delivery records.
 */
import type { AppContext } from '../context.js';
import { nowUs } from '../core/time.js';
import { enqueue } from '../jobs/queue.js';
import type { WebhookRepo } from './repo.js';

export const PRUNE_JOB = 'webhooks.prune';
const PERIOD_MS = 3600_000;
/** Done jobs are kept a week: long enough to debug, and past any unique-key reuse window. */
const DONE_JOB_RETENTION_MS = 7 * 24 * 3600_000;

export function registerPrune(ctx: AppContext, repo: WebhookRepo): void {
  ctx.worker.register(PRUNE_JOB, {
    run: async () => {
      await repo.pruneDeliveries(nowUs() - ctx.config.webhookDeliveryRetentionMs * 1000);
      await ctx.queue.prune(nowUs() - DONE_JOB_RETENTION_MS * 1000);
    },
  });
  const propose = () => {
    const slot = Math.floor(Date.now() / PERIOD_MS);
    enqueue(ctx.db.kysely, { kind: PRUNE_JOB, payload: { slot }, uniqueKey: `${PRUNE_JOB}:${slot}`, maxAttempts: 3 }).catch((err: unknown) =>
      ctx.log.warn({ err }, 'could not schedule webhook housekeeping'),
    );
  };
  // First proposal a little after start (migrations done, listeners up), then once per period.
  setTimeout(propose, 10_000).unref();
  setInterval(propose, PERIOD_MS).unref();
}
