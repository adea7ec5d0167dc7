/**
 * Subscription reads of the jobs that start together, one query for all of them: a claim hands
 * the worker up to webhookConcurrency deliveries (or 128 fan-outs) at once, and a read each was a
 * round trip each on PostgreSQL. Each job still reads what is stored when it starts (a
 * subscription may have been deactivated or removed since its event); the reads asked for in the
 * same turn of the event loop share one query, made once the current synchronous work (the worker
 * starting the claimed jobs) is done. On PostgreSQL a delivery's claim reads its subscription
 * itself (ClaimRead; `claimed`), so only fan-outs and SQLite's deliveries query here.
 */
import { Coalesced } from './coalesced.js';
import type { ClaimReadRow } from '../jobs/queue.js';
import { subscriptionFromJson, type Subscription, type WebhookRepo } from './repo.js';

export class SubscriptionReads {
  private readonly byId: Coalesced<number, Subscription>;
  private readonly ofProject: Coalesced<number, Subscription[]>;

  constructor(repo: WebhookRepo) {
    this.byId = new Coalesced(async (ids) => new Map((await repo.byIds(ids)).map((s) => [s.id, s])));
    this.ofProject = new Coalesced(async (projectIds) => {
      const found = new Map<number, Subscription[]>();
      for (const s of await repo.activeOf(projectIds)) found.set(s.projectId, [...(found.get(s.projectId) ?? []), s]);
      return found;
    });
  }

  /** The project's subscription `id` as stored now, or null when it is gone. */
  async get(projectId: number, id: number): Promise<Subscription | null> {
    return ofProject(projectId, (await this.byId.get(id)) ?? null);
  }

  /**
   * The same from the row a delivery's claim read with it (ClaimRead, PostgreSQL): stored as of
   * the claim, which is when the delivery started. Null for a missing row, as `get`.
   */
  claimed(projectId: number, row: ClaimReadRow | null): Subscription | null {
    return ofProject(projectId, row ? subscriptionFromJson(row) : null);
  }

  /** Active subscriptions of a project to one event, in id order: the fan-out targets. */
  async activeFor(projectId: number, event: string): Promise<Subscription[]> {
    const subs = (await this.ofProject.get(projectId)) ?? [];
    return subs.filter((s) => s.event === event).sort((a, b) => a.id - b.id);
  }
}

/** Another project's subscription is as good as a missing one. */
function ofProject(projectId: number, sub: Subscription | null): Subscription | null {
  return sub && sub.projectId === projectId ? sub : null;
}
