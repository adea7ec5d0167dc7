/**
 * Housekeeping of the attempt records: every period some node (one, thanks to the unique key per
 * period) deletes delivery records older than the retention. (Finished jobs are pruned by the
 * queue itself, jobs/maintenance.ts.)
 */
import type { AppContext } from '../context.js';
import { nowUs } from '../core/time.js';
import type { JobHandler } from '../jobs/worker.js';
import type { WebhookRepo } from './repo.js';

export const PRUNE_PERIOD_MS = 3600_000;
/** How long a delivery's attempt records stay readable (`GET /webhooks/{id}/deliveries/`, the dashboard). */
export const DELIVERY_RETENTION_MS = 30 * 24 * 3600_000;

export function pruneHandler(ctx: AppContext, repo: WebhookRepo): JobHandler<'webhooks.prune'> {
  return {
    run: () => repo.pruneDeliveries(nowUs() - DELIVERY_RETENTION_MS * 1000),
  };
}
