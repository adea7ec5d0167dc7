/** Wire shapes of the webhooks feature, declared once as schemas: the subscription object (wire-reference §2.10) and attempt records. */
import { z } from 'zod';
import { formatUs } from '../core/time.js';
import type { DeliveryRecord, Subscription } from './repo.js';

/** Exactly the fields and order of the management API's subscription object. */
export const subscriptionSchema = z.object({
  id: z.number().int(),
  created: z.string(),
  updated: z.string(),
  event: z.string(),
  target_url: z.string(),
  project: z.number().int(),
  is_active: z.boolean(),
  signing_secret: z.string().nullable(),
  version: z.string(),
});

/** REST extension: one delivery attempt, so a user can see why a hook failed. */
export const deliverySchema = z.object({
  id: z.number().int(),
  webhook: z.number().int(),
  event: z.string(),
  event_id: z.number().int(),
  attempt: z.number().int(),
  target_url: z.string(),
  started: z.string(),
  duration_ms: z.number(),
  /** The target's HTTP status; null when no answer came. */
  status: z.number().int().nullable(),
  success: z.boolean(),
  error: z.string().nullable(),
  response_excerpt: z.string().nullable(),
});

export type SubscriptionJson = z.output<typeof subscriptionSchema>;
export type DeliveryJson = z.output<typeof deliverySchema>;

export function subscriptionJson(s: Subscription): SubscriptionJson {
  return {
    id: s.id,
    created: formatUs(s.createdUs),
    updated: formatUs(s.updatedUs),
    event: s.event,
    target_url: s.targetUrl,
    project: s.projectId,
    is_active: s.isActive,
    signing_secret: s.signingSecret,
    version: s.version,
  };
}

export function deliveryJson(d: DeliveryRecord): DeliveryJson {
  return {
    id: d.id,
    webhook: d.webhookId,
    event: d.event,
    event_id: d.eventId,
    attempt: d.attempt,
    target_url: d.targetUrl,
    started: formatUs(d.startedUs),
    duration_ms: d.durationMs,
    status: d.status,
    success: d.success,
    error: d.error,
    response_excerpt: d.responseExcerpt,
  };
}
