/**
 * A file event's delivery jobs: one per active subscription of the project to the event, each with
 * its body built here, once, and frozen in the job so every retry sends the same bytes. Written
 * by the change itself (`changeDeliveries`, in its transaction: jobs/event-outbox.ts), or by the
 * fan-out of an `event.file` job that a node without the webhooks feature wrote (dispatch.ts).
 */
import type { AppContext } from '../context.js';
import type { FileRecord } from '../core/file-record.js';
import { nowUs } from '../core/time.js';
import type { DbOrTrx } from '../db/connect.js';
import type { FileEventJobs } from '../jobs/event-outbox.js';
import type { FileEvent } from '../jobs/file-events.js';
import type { EnqueueOptions } from '../jobs/queue.js';
import { payloadBodies } from './payload.js';
import type { Subscription, WebhookRepo } from './repo.js';

/** Deliveries are bounded by time (webhookRetryForMs), not by count; this is only a backstop. */
const DELIVERY_MAX_ATTEMPTS = 1000;

/** Deliveries of one project share its concurrency limit (webhookConcurrencyPerProject). */
export const deliveryFairKey = (projectId: number) => `project:${projectId}`;

/** Where an event's deliveries come from: the `event.file` job fanned out (its id ties their attempts together), or the change itself. */
export interface EventSource {
  /** The `event.file` job's id; absent for a change's own deliveries (each is then its own job's id). */
  eventJobId?: number;
  /** When the change committed (retries stop webhookRetryForMs after it). */
  eventUs: number;
}

/**
 * The delivery jobs of one event to `subscriptions` (the active ones to that event, in id order).
 * A fan-out's carry a unique key per (event job, subscription): one run again after a crash
 * enqueues no duplicates. A change's own need none: they are written once, by the transaction
 * that commits the change (a rerun of that transaction after a failure rolled the first back).
 */
export function deliveryJobs(ctx: AppContext, event: FileEvent, source: EventSource, pubKey: string, file: FileRecord, subscriptions: readonly Subscription[]): EnqueueOptions<'webhook.deliver'>[] {
  const bodies = payloadBodies({ event, projectPubKey: pubKey, file, bases: ctx.bases }, subscriptions);
  const { eventJobId } = source;
  return subscriptions.map((subscription, i) => ({
    kind: 'webhook.deliver',
    payload: {
      subscriptionId: subscription.id,
      projectId: event.projectId,
      event: event.event,
      ...(eventJobId !== undefined ? { eventId: eventJobId } : {}),
      eventUs: source.eventUs,
      body: bodies[i] ?? '',
    },
    ...(eventJobId !== undefined ? { uniqueKey: `deliver:${eventJobId}:${subscription.id}` } : {}),
    maxAttempts: DELIVERY_MAX_ATTEMPTS,
    fairKey: deliveryFairKey(event.projectId),
  }));
}

/**
 * The deliveries of a change's events (all of one project), read and built in its transaction:
 * the subscriptions as the change sees them, and each file as the transaction holds it when the
 * event is recorded. Which events have an active subscription is asked first, by the statement
 * every upload already made (WebhookRepo.activeEvents, read once per SQLite transaction): a
 * project without subscriptions reads nothing more.
 */
export function changeDeliveries(ctx: AppContext, repo: WebhookRepo): FileEventJobs {
  return async (db: DbOrTrx, projectId: number, events: readonly FileEvent[]) => {
    const active = await repo.activeEvents(db, projectId, [...new Set(events.map((e) => e.event))]);
    const heard = events.filter((e) => active.has(e.event));
    if (heard.length === 0) return [];
    const subscribed = await repo.activeWithPubKey(db, projectId, [...active]);
    if (!subscribed) return [];
    const files = new Map((await ctx.files.findMany(projectId, [...new Set(heard.map((e) => e.uuid))], db)).map((f) => [f.uuid, f]));
    const source = { eventUs: nowUs() };
    return heard.flatMap((event) => {
      const file = files.get(event.uuid);
      const subscriptions = subscribed.subscriptions.filter((s) => s.event === event.event);
      // A change records events of its own files only: a missing one would be a bug upstream.
      if (!file) throw new Error(`file event ${event.event} for ${event.uuid}, which the change does not hold`);
      return deliveryJobs(ctx, event, source, subscribed.pubKey, file, subscriptions);
    });
  };
}
