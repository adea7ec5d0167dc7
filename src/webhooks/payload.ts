/**
 * The notification body (wire-reference §4, payload version 0.7). `data` is the union of the REST
 * file object (with appdata) and the upload-info fields the spec's table names, so readers of
 * either shape work. `hook` never carries the signing secret.
 */
import type { FileEvent } from '../core/events.js';
import type { FileRecord } from '../core/file-record.js';
import { formatUs } from '../core/time.js';
import { restFileJson, type UrlBases } from '../core/file-json.js';
import type { Subscription } from './repo.js';

export interface PayloadInput {
  event: FileEvent;
  subscription: Subscription;
  projectPubKey: string;
  file: FileRecord;
  bases: UrlBases;
}

export function buildPayload({ event, subscription: s, projectPubKey, file, bases }: PayloadInput): Record<string, unknown> {
  const payload: Record<string, unknown> = {
    initiator: event.initiator,
    hook: {
      id: s.id,
      project_id: s.projectId,
      project_pub_key: projectPubKey,
      target: s.targetUrl,
      event: s.event,
      is_active: s.isActive,
      version: s.version,
      created_at: formatUs(s.createdUs),
      updated_at: formatUs(s.updatedUs),
    },
    data: {
      ...restFileJson(file, bases, { includeAppdata: true }),
      file_id: file.uuid,
      filename: file.filename,
      is_stored: file.storedUs !== null,
      total: file.size,
      done: file.size,
      image_info: file.contentInfo?.image ?? null,
    },
    // The file's CDN address even after removal: it identifies the file the event is about.
    file: `${bases.cdn}/${file.uuid}/${file.filename}`,
  };
  if (event.event === 'file.info_updated') payload['previous_values'] = event.previousValues ?? {};
  return payload;
}
