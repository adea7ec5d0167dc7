/**
 * Housekeeping that keeps the queue and the attempt records small: every period some node (one,
 * thanks to the unique key per period) deletes finished jobs and old delivery records.
 */
import type { AppContext } from '../context.js';
import { nowUs } from '../core/time.js';
import type { JobHandler } from '../jobs/worker.js';
import type { WebhookRepo } from './repo.js';

export const PRUNE_JOB = 'webhooks.prune';
export const PRUNE_PERIOD_MS = 3600_000;
/** Done jobs are kept a week: long enough to debug, and past any unique-key reuse window. */
const DONE_JOB_RETENTION_MS = 7 * 24 * 3600_000;

export function pruneHandler(ctx: AppContext, repo: WebhookRepo): JobHandler {
  return {
    run: async () => {
      await repo.pruneDeliveries(nowUs() - ctx.config.webhookDeliveryRetentionMs * 1000);
      await ctx.queue.prune(nowUs() - DONE_JOB_RETENTION_MS * 1000);
    },
  };
}
