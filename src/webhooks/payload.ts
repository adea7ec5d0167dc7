/**
 * The notification body (wire-reference §4, payload version 0.7). `data` is the union of the REST
 * file object (with appdata) and the upload-info fields the spec's table names, so readers of
 * either shape work. `hook` never carries the signing secret.
 */
import type { FileEvent, Initiator } from '../jobs/file-events.js';
import type { FileRecord, ImageInfo } from '../core/file-record.js';
import { formatUs } from '../core/time.js';
import { restFileJson, type RestFileJson, type UrlBases } from '../core/file-json.js';
import type { Subscription } from './repo.js';

export interface PayloadInput {
  event: FileEvent;
  subscription: Subscription;
  projectPubKey: string;
  file: FileRecord;
  bases: UrlBases;
}

/** `hook`: the subscription as the notification describes it (never its signing secret). */
export interface WebhookHookJson {
  id: number;
  project_id: number;
  project_pub_key: string;
  target: string;
  event: string;
  is_active: boolean;
  version: string;
  created_at: string;
  updated_at: string;
}

/** `data`: the REST file object with appdata, plus the upload-info fields the spec's table names. */
export interface WebhookFileJson extends RestFileJson {
  file_id: string;
  filename: string;
  is_stored: boolean;
  total: number;
  done: number;
  image_info: ImageInfo | null;
}

export interface WebhookPayloadJson {
  initiator: Initiator;
  hook: WebhookHookJson;
  data: WebhookFileJson;
  file: string;
  /** file.info_updated only. */
  previous_values?: NonNullable<FileEvent['previousValues']>;
}

export function buildPayload({ event, subscription, projectPubKey, file, bases }: PayloadInput): WebhookPayloadJson {
  const payload: WebhookPayloadJson = {
    initiator: event.initiator,
    hook: hookJson(subscription, projectPubKey),
    data: fileJson(file, bases),
    file: fileUrl(file, bases),
  };
  if (event.event === 'file.info_updated') payload.previous_values = event.previousValues ?? {};
  return payload;
}

/**
 * The bodies of one event's notifications, one per subscription: JSON.stringify(buildPayload(…))
 * of each, byte for byte, with everything but `hook` built and serialized once for all of them
 * (the file object is most of a body, and a fan-out has a body per subscription).
 */
export function payloadBodies({ event, projectPubKey, file, bases }: Omit<PayloadInput, 'subscription'>, subscriptions: readonly Subscription[]): string[] {
  const head = `{"initiator":${JSON.stringify(event.initiator)},"hook":`;
  const previous = event.event === 'file.info_updated' ? `,"previous_values":${JSON.stringify(event.previousValues ?? {})}` : '';
  const tail = `,"data":${JSON.stringify(fileJson(file, bases))},"file":${JSON.stringify(fileUrl(file, bases))}${previous}}`;
  return subscriptions.map((s) => head + JSON.stringify(hookJson(s, projectPubKey)) + tail);
}

function hookJson(s: Subscription, projectPubKey: string): WebhookHookJson {
  return {
    id: s.id,
    project_id: s.projectId,
    project_pub_key: projectPubKey,
    target: s.targetUrl,
    event: s.event,
    is_active: s.isActive,
    version: s.version,
    created_at: formatUs(s.createdUs),
    updated_at: formatUs(s.updatedUs),
  };
}

function fileJson(file: FileRecord, bases: UrlBases): WebhookFileJson {
  return {
    ...restFileJson(file, bases, { includeAppdata: true }),
    file_id: file.uuid,
    filename: file.filename,
    is_stored: file.storedUs !== null,
    total: file.size,
    done: file.size,
    image_info: file.contentInfo?.image ?? null,
  };
}

/** The file's CDN address even after removal: it identifies the file the event is about. */
const fileUrl = (file: FileRecord, bases: UrlBases) => `${bases.cdn}/${file.uuid}/${file.filename}`;
