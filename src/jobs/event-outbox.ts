/**
 * The outbox of file events: what an event causes is written in the transaction of the change
 * that causes it, so a committed change never loses its event and a rolled-back one never
 * announces anything.
 */
import type { DbOrTrx } from '../db/connect.js';
import type { FileEvent } from './file-events.js';
import { enqueueMany, type EnqueueOptions } from './queue.js';

/** Job kind of an event written for whichever node reads it (the webhooks feature's fan-out). */
const FILE_EVENT_JOB = 'event.file';

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
 * Where file events are written: as the jobs their consumers return (FileEventJobs). Until the
 * node's features are known (and in the CLI, which runs none) every event is written as an
 * `event.file` job instead, so none is lost to a consumer that exists but was not asked (the
 * webhooks feature fans those out).
 */
export class FileEventOutbox {
  /** Null until heardBy: then events are written as `event.file` jobs. */
  private consumers: readonly FileEventJobs[] | null = null;

  /** The node's consumers, once its features are built (an empty list: no event is written). */
  heardBy(consumers: readonly FileEventJobs[]): void {
    this.consumers = consumers;
  }

  async record(db: DbOrTrx, event: FileEvent): Promise<void> {
    await this.recordMany(db, [event]);
  }

  /** `record` for several events: each consumer asked once per project, their jobs written in one INSERT. */
  async recordMany(db: DbOrTrx, events: readonly FileEvent[]): Promise<void> {
    if (this.consumers === null) return enqueueMany(db, events.map(eventJob));
    const byProject = new Map<number, FileEvent[]>();
    for (const e of events) {
      const ofProject = byProject.get(e.projectId);
      if (ofProject) ofProject.push(e);
      else byProject.set(e.projectId, [e]);
    }
    const jobs: EnqueueOptions[] = [];
    for (const [projectId, ofProject] of byProject) {
      for (const consumer of this.consumers) jobs.push(...(await consumer(db, projectId, ofProject)));
    }
    await enqueueMany(db, jobs);
  }
}

const eventJob = (payload: FileEvent): EnqueueOptions => ({ kind: FILE_EVENT_JOB, payload, maxAttempts: 20 });
