/**
 * The outbox of file events: each is written as an `event.file` job in the transaction of the
 * change that causes it, so a committed change never loses its event and a rolled-back one never
 * announces anything.
 */
import type { DbOrTrx } from '../db/connect.js';
import type { FileEvent, FileEventName } from './file-events.js';
import { enqueueMany, type EnqueueOptions } from './queue.js';

/** Job kind the consumers (the webhooks feature's fan-out) handle. */
const FILE_EVENT_JOB = 'event.file';

/**
 * Which of these events of this project something would consume (the webhooks feature: those with
 * an active subscription), asked once for all the events of a change (an upload stored at once
 * has two). Read in the transaction of the change, so it sees what that change would.
 */
export type FileEventAudience = (db: DbOrTrx, projectId: number, events: readonly FileEventName[]) => Promise<ReadonlySet<FileEventName>>;

/**
 * A consumer that turns the events of a change (all of one project) straight into jobs of its own,
 * written in the change's transaction with everything else it writes (the webhooks feature: one
 * delivery job per active subscription, its body built from the file as the transaction holds it).
 * An `event.file` job for each event was an insert, a claim, a completion and their index writes
 * before any of its work began, and the work waited for that job's turn. Returns no jobs for the
 * events it does not hear; it must only read (what it writes is what it returns).
 */
export type FileEventJobs = (db: DbOrTrx, projectId: number, events: readonly FileEvent[]) => Promise<readonly EnqueueOptions[]>;

/**
 * Where file events are written: as the jobs their consumers return (FileEventJobs), and as
 * `event.file` jobs for the audiences that read those. An event no feature would consume is not
 * written: each one is a job inserted, claimed and completed (three durable writes), and most
 * projects have no subscription for most events. Until the node's features are known (and in the
 * CLI, which runs none) every event is written as an `event.file` job, so none is lost to a
 * consumer that exists but was not asked (the webhooks feature fans those out).
 */
export class FileEventOutbox {
  private audiences: FileEventAudience[] | null = null;
  private consumers: readonly FileEventJobs[] = [];
  /**
   * Per transaction, the (project, event) pairs already known to have an audience: a batch store
   * of 100 files asked the same question 100 times, a round trip each on PostgreSQL. Only a yes is
   * remembered: an audience that goes away meanwhile costs one event the fan-out drops, while a
   * remembered no could miss a subscription committed during the transaction.
   */
  private readonly heardIn = new WeakMap<DbOrTrx, Set<string>>();

  /**
   * The node's consumers, once its features are built: those that read `event.file` jobs (an empty
   * list means none will ever read one) and those that write their own jobs for the events.
   */
  heardBy(audiences: FileEventAudience[], consumers: readonly FileEventJobs[] = []): void {
    this.audiences = audiences;
    this.consumers = consumers;
  }

  async record(db: DbOrTrx, event: FileEvent): Promise<void> {
    await this.recordMany(db, [event]);
  }

  /**
   * `record` for several events, written in one INSERT (a batch store's) with the consumers' jobs,
   * their audience read once per project.
   */
  async recordMany(db: DbOrTrx, events: readonly FileEvent[]): Promise<void> {
    const eventJob = (payload: FileEvent): EnqueueOptions => ({ kind: FILE_EVENT_JOB, payload, maxAttempts: 20 });
    if (this.audiences === null) return enqueueMany(db, events.map(eventJob));
    const byProject = new Map<number, FileEvent[]>();
    for (const e of events) {
      const ofProject = byProject.get(e.projectId);
      if (ofProject) ofProject.push(e);
      else byProject.set(e.projectId, [e]);
    }
    const jobs: EnqueueOptions[] = [];
    for (const [projectId, ofProject] of byProject) {
      const heard = await this.heard(db, projectId, [...new Set(ofProject.map((e) => e.event))]);
      for (const e of ofProject) if (heard.has(e.event)) jobs.push(eventJob(e));
      for (const consumer of this.consumers) jobs.push(...(await consumer(db, projectId, ofProject)));
    }
    await enqueueMany(db, jobs);
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
