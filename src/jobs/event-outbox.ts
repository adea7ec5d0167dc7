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
 * Which of these events of this project something would consume (the webhooks feature: those with
 * an active subscription), asked once for all the events of a change (an upload stored at once
 * has two). Read in the transaction of the change, so it sees what that change would.
 */
export type FileEventAudience = (db: DbOrTrx, projectId: number, events: readonly FileEventName[]) => Promise<ReadonlySet<FileEventName>>;

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

  /** `record` for several events, written in one INSERT (a batch store's), their audience read once per project. */
  async recordMany(db: DbOrTrx, events: readonly FileEvent[]): Promise<void> {
    let heard = events;
    if (this.audiences !== null) {
      const namesByProject = new Map<number, Set<FileEventName>>();
      for (const e of events) namesByProject.set(e.projectId, (namesByProject.get(e.projectId) ?? new Set()).add(e.event));
      const heardByProject = new Map<number, ReadonlySet<FileEventName>>();
      for (const [projectId, names] of namesByProject) heardByProject.set(projectId, await this.heard(db, projectId, [...names]));
      heard = events.filter((e) => heardByProject.get(e.projectId)?.has(e.event));
    }
    await enqueueMany(db, heard.map((payload) => ({ kind: FILE_EVENT_JOB, payload, maxAttempts: 20 })));
  }

  /** Which of `names` of the project have an audience: remembered yeses first, then each audience once for the rest. */
  private async heard(db: DbOrTrx, projectId: number, names: FileEventName[]): Promise<Set<FileEventName>> {
    const known = db.isTransaction ? this.heardIn.get(db) : undefined;
    const key = (name: FileEventName) => `${projectId} ${name}`;
    const yes = new Set(names.filter((n) => known?.has(key(n))));
    let ask = names.filter((n) => !yes.has(n));
    for (const audience of this.audiences ?? []) {
      if (ask.length === 0) break;
      const answered = await audience(db, projectId, ask);
      for (const n of answered) yes.add(n);
      ask = ask.filter((n) => !answered.has(n));
    }
    if (db.isTransaction && yes.size > 0) {
      const set = known ?? new Set<string>();
      for (const n of yes) set.add(key(n));
      this.heardIn.set(db, set);
    }
    return yes;
  }
}
