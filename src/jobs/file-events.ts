/**
 * File events, recorded in the same transaction as the change that causes them (outbox). The
 * webhook dispatcher consumes them from the job queue; nothing is sent from a request handler.
 */
import type { DbOrTrx } from '../db/connect.js';
import { enqueue } from './queue.js';

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

/** Job kind the dispatcher handles. */
export const FILE_EVENT_JOB = 'event.file';

/**
 * Whether something would consume this event of this project (the webhooks feature: an active
 * subscription to it). Read in the transaction of the change, so it sees what that change would.
 */
export type FileEventAudience = (db: DbOrTrx, projectId: number, event: FileEventName) => Promise<boolean>;

/**
 * Where file events are written. An event no feature would consume is not written: each one is a
 * job inserted, claimed and completed (three durable writes), and most projects have no
 * subscription for most events. Until the node's features are known (and in the CLI, which runs
 * none) every event is written, so none is lost to a consumer that exists but was not asked.
 */
export class FileEventOutbox {
  private audiences: FileEventAudience[] | null = null;

  /** The node's consumers, once its features are built; an empty list means none will ever read. */
  heardBy(audiences: FileEventAudience[]): void {
    this.audiences = audiences;
  }

  async record(db: DbOrTrx, event: FileEvent): Promise<void> {
    if (this.audiences !== null && !(await this.heard(db, event))) return;
    await enqueue(db, { kind: FILE_EVENT_JOB, payload: event, maxAttempts: 20 });
  }

  private async heard(db: DbOrTrx, event: FileEvent): Promise<boolean> {
    for (const audience of this.audiences ?? []) if (await audience(db, event.projectId, event.event)) return true;
    return false;
  }
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
