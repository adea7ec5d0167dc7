/**
 * The outbox of file events: each is written as an `event.file` job in the transaction of the
 * change that causes it, so a committed change never loses its event and a rolled-back one never
 * announces anything.
 */
import type { DbOrTrx } from '../db/connect.js';
import type { FileEvent, FileEventName } from './file-events.js';
import { enqueueMany } from './queue.js';

/** Job kind the consumers (the webhooks feature's fan-out) handle. */
const FILE_EVENT_JOB = 'event.file';

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
  /**
   * Per transaction, the (project, event) pairs already known to have an audience: a batch store
   * of 100 files asked the same question 100 times, a round trip each on PostgreSQL. Only a yes is
   * remembered: an audience that goes away meanwhile costs one event the fan-out drops, while a
   * remembered no could miss a subscription committed during the transaction.
   */
  private readonly heardIn = new WeakMap<DbOrTrx, Set<string>>();

  /** The node's consumers, once its features are built; an empty list means none will ever read. */
  heardBy(audiences: FileEventAudience[]): void {
    this.audiences = audiences;
  }

  async record(db: DbOrTrx, event: FileEvent): Promise<void> {
    await this.recordMany(db, [event]);
  }

  /** `record` for several events, written in one INSERT (a batch store's). */
  async recordMany(db: DbOrTrx, events: readonly FileEvent[]): Promise<void> {
    const heard: FileEvent[] = [];
    for (const event of events) if (this.audiences === null || (await this.heard(db, event))) heard.push(event);
    await enqueueMany(db, heard.map((payload) => ({ kind: FILE_EVENT_JOB, payload, maxAttempts: 20 })));
  }

  private async heard(db: DbOrTrx, event: FileEvent): Promise<boolean> {
    const key = `${event.projectId} ${event.event}`;
    const known = db.isTransaction ? this.heardIn.get(db) : undefined;
    if (known?.has(key)) return true;
    for (const audience of this.audiences ?? []) {
      if (!(await audience(db, event.projectId, event.event))) continue;
      if (db.isTransaction) this.heardIn.set(db, (known ?? new Set<string>()).add(key));
      return true;
    }
    return false;
  }
}
