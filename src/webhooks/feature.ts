/** Webhook subscriptions (REST), the fan-out of file events to subscriptions, delivery, housekeeping. */
import type { AppContext } from '../context.js';
import type { Feature } from '../feature.js';
import { webhookRoutes } from './rest.js';
import { fanOutHandler } from './dispatch.js';
import { deliveryHandler } from './deliver.js';
import { changeDeliveries } from './event-deliveries.js';
import { pruneHandler, PRUNE_PERIOD_MS } from './maintenance.js';
import { WebhookRepo } from './repo.js';
import { SubscriptionReads } from './subscription-reads.js';
import { WebhookService } from './service.js';

export function webhooksFeature(ctx: AppContext): Feature {
  const repo = new WebhookRepo(ctx.db);
  // Shared by the fan-outs and the deliveries: jobs starting together read in one query.
  const subscriptions = new SubscriptionReads(repo);
  return {
    name: 'webhooks',
    restRoutes: webhookRoutes(ctx, new WebhookService(repo)),
    jobs: {
      // File events written as jobs (by a node without this feature, such as the CLI): fanned out
      // to subscriptions, one job per delivery.
      'event.file': fanOutHandler(ctx, subscriptions),
      'webhook.deliver': deliveryHandler(ctx, subscriptions),
      'webhooks.prune': pruneHandler(ctx, repo),
    },
    // A change writes the deliveries of its events itself, in its transaction: one job per active
    // subscription of the project to each event, none when it has none.
    fileEventJobs: changeDeliveries(ctx, repo),
    // First proposal a little after start (migrations done, listeners up), then once per period.
    schedules: [{ kind: 'webhooks.prune', periodMs: PRUNE_PERIOD_MS, firstAfterMs: 10_000 }],
  };
}
