/**
 * Fan-out: one `event.file` job (written with the change by a node that does not run the webhooks
 * feature, such as the CLI: jobs/event-outbox.ts) becomes one delivery job per active subscription
 * of the project to that event (event-deliveries.ts). Nodes with the feature write the deliveries
 * in the change's own transaction instead. Delivery jobs carry a unique key per (event job,
 * subscription): a fan-out retried after a crash enqueues no duplicates.
 */
import type { AppContext } from '../context.js';
import type { FileRecord } from '../core/file-record.js';
import { nowUs } from '../core/time.js';
import { enqueueCombinable } from '../jobs/queue.js';
import type { JobHandler } from '../jobs/worker.js';
import type { ProjectRow } from '../projects/repo.js';
import { Coalesced } from './coalesced.js';
import { deliveryJobs } from './event-deliveries.js';
import type { SubscriptionReads } from './subscription-reads.js';

/**
 * Fan-outs running at once on a node, in a lane of their own. A fan-out is a few reads and one
 * commit shared with the fan-outs finishing alongside it: the more run together, the fewer
 * commits, claims and reads a burst of events costs, and the sooner its deliveries exist: a batch
 * store commits 100 events at once, and with fewer slots than that its events are fanned out over
 * several cycles while the deliveries wait. Their own lane also keeps a burst of events from
 * holding up expiry and byte reclaiming.
 */
const FAN_OUT_CONCURRENCY = 128;

export function fanOutHandler(ctx: AppContext, subscriptions: SubscriptionReads): JobHandler<'event.file'> {
  const { files, projects } = fanOutReads(ctx);
  return {
    // Fan-out is a few queries; renewed by the heartbeat meanwhile, so a short lease only means a
    // quick pick-up after a crash.
    leaseMs: 10_000,
    concurrency: FAN_OUT_CONCURRENCY,
    async run(event, job, outcome): Promise<void> {
      const subs = await subscriptions.activeFor(event.projectId, event.event);
      if (subs.length === 0) return;
      const [file, project] = await Promise.all([files.get(fileKey(event.projectId, event.uuid)), projects.get(event.projectId)]);
      if (!file || !project) {
        ctx.log.warn({ event: event.event, uuid: event.uuid }, 'file event for a missing file or project; nothing to deliver');
        return;
      }
      const deliveries = deliveryJobs(ctx, event, { eventJobId: job.id, eventUs: job.createdUs || nowUs() }, project.pubKey, file, subs);
      // Committed with this job's completion: one commit per event, shared by concurrent events,
      // and one INSERT for the deliveries of all the fan-outs of that commit (on PostgreSQL one
      // statement with their completions and the NOTIFY: enqueueCombinable). Should the fan-out
      // run again after a crash, the unique keys drop the repeats.
      outcome.alongsideMerged(enqueueCombinable, deliveries);
    },
  };
}

const fileKey = (projectId: number, uuid: string) => `${projectId}/${uuid}`;

/**
 * The fan-outs started by one claim (up to 128, mostly one project's events) read their files and
 * their project together: one query per project for the files, one read per project, instead of
 * two round trips per event (see coalesced.ts).
 */
function fanOutReads(ctx: AppContext): { files: Coalesced<string, FileRecord>; projects: Coalesced<number, ProjectRow> } {
  const files = new Coalesced<string, FileRecord>(async (keys) => {
    const byProject = new Map<number, string[]>();
    for (const key of keys) {
      const [projectId, uuid] = key.split('/') as [string, string];
      byProject.set(Number(projectId), [...(byProject.get(Number(projectId)) ?? []), uuid]);
    }
    const found = await Promise.all([...byProject].map(([projectId, uuids]) => ctx.files.findMany(projectId, uuids)));
    return new Map(found.flat().map((f) => [fileKey(f.projectId, f.uuid), f]));
  });
  const projects = new Coalesced<number, ProjectRow>(async (ids) => {
    const rows = await Promise.all(ids.map((id) => ctx.projects.byId(id)));
    return new Map(rows.filter((p): p is ProjectRow => p !== null).map((p) => [p.id, p]));
  });
  return { files, projects };
}
