/**
 * The queue's own housekeeping, contributed by app.ts beside the features' jobs: every hour some
 * node (one, thanks to the unique key per period) deletes finished jobs older than a week.
 */
import { nowUs } from '../core/time.js';
import type { PeriodicSchedule } from './periodic.js';
import type { JobQueue } from './queue.js';
import type { JobHandlers } from './worker.js';

const JOBS_PRUNE_PERIOD_MS = 3600_000;
/** Done jobs are kept a week: long enough to debug, and past any unique-key reuse window. */
const DONE_JOB_RETENTION_MS = 7 * 24 * 3600_000;

export interface QueueMaintenance {
  jobs: JobHandlers;
  schedules: PeriodicSchedule[];
}

export function queueMaintenance(queue: JobQueue): QueueMaintenance {
  return {
    jobs: {
      'jobs.prune': { run: () => queue.prune(nowUs() - DONE_JOB_RETENTION_MS * 1000) },
    },
    // First proposal a little after start (migrations done, listeners up), then once per period.
    schedules: [{ kind: 'jobs.prune', periodMs: JOBS_PRUNE_PERIOD_MS, firstAfterMs: 10_000 }],
  };
}
