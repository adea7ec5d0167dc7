/** Wire shapes of the webhooks feature: the subscription object (wire-reference §2.10) and attempt records. */
import { formatUs } from '../core/time.js';
import type { DeliveryRecord, Subscription } from './repo.js';

/** Exactly the fields and order of the management API's subscription object. */
export interface SubscriptionJson {
  id: number;
  created: string;
  updated: string;
  event: string;
  target_url: string;
  project: number;
  is_active: boolean;
  signing_secret: string | null;
  version: string;
}

/** REST extension: one delivery attempt, so a user can see why a hook failed. */
export interface DeliveryJson {
  id: number;
  webhook: number;
  event: string;
  event_id: number;
  attempt: number;
  target_url: string;
  started: string;
  duration_ms: number;
  /** The target's HTTP status; null when no answer came. */
  status: number | null;
  success: boolean;
  error: string | null;
  response_excerpt: string | null;
}

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
