/**
 * File events: what happened to a file, and who made it happen. They are recorded in the same
 * transaction as the change that causes them (event-outbox.ts); the webhook dispatcher consumes
 * them from the job queue, nothing is sent from a request handler.
 */

export const FILE_EVENTS = ['file.uploaded', 'file.infected', 'file.stored', 'file.deleted', 'file.info_updated'] as const;
export type FileEventName = (typeof FILE_EVENTS)[number];

export interface Initiator {
  type: 'api' | 'system' | 'addon';
  detail: { request_id: string | null; addon_name: string | null; source_file_uuid: string | null };
}

export interface FileEvent {
  projectId: number;
  event: FileEventName;
  uuid: string;
  initiator: Initiator;
  /** For file.info_updated: the values before the change (null = key was added). */
  previousValues?: { metadata?: Record<string, string | null>; appdata?: Record<string, unknown>; tags?: string[] };
}

export function apiInitiator(requestId: string | null = null): Initiator {
  return { type: 'api', detail: { request_id: requestId, addon_name: null, source_file_uuid: null } };
}

export function systemInitiator(): Initiator {
  return { type: 'system', detail: { request_id: null, addon_name: null, source_file_uuid: null } };
}

/** A change made by an add-on run (its appdata, a file it made: `source_file_uuid` is the file it ran on). */
export function addonInitiator(requestId: string, addonName: string, sourceFileUuid: string | null = null): Initiator {
  return { type: 'addon', detail: { request_id: requestId, addon_name: addonName, source_file_uuid: sourceFileUuid } };
}
