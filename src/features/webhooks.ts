/** Webhook subscriptions, event dispatch and delivery. The code lives in src/webhooks/. */
import { FILE_EVENT_JOB } from '../core/events.js';
import { webhookRoutes } from '../http/rest/webhooks.js';
import { DELIVERY_JOB, fanOutHandler } from '../webhooks/dispatch.js';
import { deliveryHandler } from '../webhooks/deliver.js';
import { registerPrune } from '../webhooks/maintenance.js';
import { WebhookRepo } from '../webhooks/repo.js';
import type { Feature } from './types.js';

export const webhooksFeature: Feature = {
  name: 'webhooks',
  register(ctx) {
    const repo = new WebhookRepo(ctx.db.kysely);
    // The consumer of file events (core/events.ts): fan-out to subscriptions, then one job per delivery.
    ctx.worker.register(FILE_EVENT_JOB, fanOutHandler(ctx, repo));
    ctx.worker.register(DELIVERY_JOB, deliveryHandler(ctx, repo));
    registerPrune(ctx, repo);
  },
  restRoutes(ctx) {
    return webhookRoutes(ctx, new WebhookRepo(ctx.db.kysely));
  },
};
