/**
 * The job table: every job kind and the type of its payload, declared once. `enqueue` only accepts
 * a payload of its kind's type, and a handler registered for a kind receives that type, so no
 * handler casts its payload. The kind strings are stored in the jobs table: never rename one
 * (rows already in a database must still find their handler); add a new kind instead.
 *
 * Payloads are plain JSON data. The types live here (the kernel), not in the features that own
 * the kinds, so the queue imports no feature.
 */
import type { FileEvent } from './file-events.js';

/** Payload of a job proposed once per period (jobs/periodic.ts). */
export interface PeriodicPayload {
  /** Which period: floor(now / period). */
  slot: number;
}

/** One notification to one webhook subscription (webhooks feature). */
export interface WebhookDeliveryPayload {
  subscriptionId: number;
  projectId: number;
  event: string;
  /**
   * Ties the attempts of one event together: the id of the event.file job it was fanned out from;
   * absent when the change wrote the delivery itself (jobs/event-outbox.ts), then it is the
   * delivery job's own id.
   */
  eventId?: number;
  /** When the change committed; retries stop webhookRetryForMs after it. */
  eventUs: number;
  /** The exact JSON body; signed as is at send time. */
  body: string;
}

export interface JobPayloads {
  /** A file event recorded with its change (jobs/event-outbox.ts); the webhooks feature fans it out. */
  'event.file': FileEvent;
  'webhook.deliver': WebhookDeliveryPayload;
  /** Hourly: old webhook attempt records. */
  'webhooks.prune': PeriodicPayload;
  /** Hourly: finished jobs (jobs/maintenance.ts). */
  'jobs.prune': PeriodicPayload;
  /** Blobs no row references, left by crashes (blobs/sweep.ts). */
  'blobs.sweep-leftovers': PeriodicPayload;
  /** The bytes of a removed file (files feature); `removedUs` names the removal (a file restored or removed again since keeps them). */
  'blob.delete': { projectId: number; uuid: string; blobKey: string; removedUs?: number };
  /** MD5 and SHA-256 of a large file committed without them, computed after its answer (files feature). */
  'file.digest': { projectId: number; uuid: string; blobKey: string };
  /** Expiry of unstored files (files feature). */
  'files.expire': PeriodicPayload;
  /** Parts of an abandoned multipart upload (uploads feature). */
  'multipart.expire': { uuid: string; parts: number };
  /** A from_url download, and forgetting its token a day later (uploads feature). */
  'from_url.fetch': { token: string };
  'from_url.forget': { token: string };
  /** One add-on execution (add-ons feature); its state is the addon_executions row. */
  'addon.execute': { requestId: string };
  /** Daily: finished add-on executions older than a week (add-ons feature). */
  'addons.prune': PeriodicPayload;
  /** One conversion of a file, by its conversion_jobs row (conversions feature). */
  'convert.document': { token: number };
  'convert.video': { token: number };
  /** An abandoned S3 multipart upload and its parts (S3 feature). */
  's3.multipart.expire': { uploadId: string };
  /** Periodic: expired tus uploads and their staged bytes (tus feature). */
  'tus.expire': PeriodicPayload;
}

export type JobKind = keyof JobPayloads;

/** Kinds whose payload is a period slot: the only kinds a periodic schedule may propose. */
export type PeriodicKind = { [K in JobKind]: JobPayloads[K] extends PeriodicPayload ? K : never }[JobKind];
