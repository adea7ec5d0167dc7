/** Tables of the webhooks feature (merged into Database in ../schema.ts). */
import type { Generated } from 'kysely';

export interface WebhooksTable {
  id: Generated<number>;
  project_id: number;
  event: string;
  target_url: string;
  /** 0/1 */
  is_active: number;
  signing_secret: string | null;
  version: string;
  created_us: number;
  updated_us: number;
}

/** One row per delivery attempt, so a user can see why a hook failed. */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  webhook_id: number;
  project_id: number;
  event: string;
  event_id: number;
  attempt: number;
  target_url: string;
  started_us: number;
  duration_ms: number;
  /** HTTP status, null when no response arrived (refused, network error, timeout). */
  status: number | null;
  /** 0/1: a 2xx arrived. */
  success: number;
  error: string | null;
  /** At most 1 KiB of the response body. */
  response_excerpt: string | null;
}

export interface WebhooksTables {
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
}
