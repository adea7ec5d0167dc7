/** Queries of the webhooks tables: subscriptions and delivery-attempt records. */
import { PostgresAdapter, sql, type Insertable, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { MergedStatement } from '../db/group-commit.js';
import { boundLimit, ReusableQueriesByShape, type QueryArg } from '../db/reusable-query.js';
import { TransactionReads } from '../db/transaction-reads.js';
import type { Database } from '../db/schema.js';
import type { Db, DbOrTrx } from '../db/connect.js';
import type { WebhookDeliveriesTable, WebhooksTable } from '../db/tables/webhooks.js';

export interface Subscription {
  id: number;
  projectId: number;
  event: string;
  targetUrl: string;
  isActive: boolean;
  signingSecret: string | null;
  version: string;
  createdUs: number;
  updatedUs: number;
}

export interface SubscriptionPatch {
  event?: string;
  targetUrl?: string;
  isActive?: boolean;
  signingSecret?: string | null;
  version?: string;
}

export interface DeliveryRecord {
  id: number;
  webhookId: number;
  event: string;
  eventId: number;
  attempt: number;
  targetUrl: string;
  startedUs: number;
  durationMs: number;
  status: number | null;
  success: boolean;
  error: string | null;
  responseExcerpt: string | null;
}

export type NewDelivery = Omit<DeliveryRecord, 'id'> & { projectId: number };

/** `active` is an argument, not a literal 1: a reusable query must bind only its arguments (db/reusable-query.ts). */
function activeEventsBuilt(db: DbOrTrx, projectId: QueryArg, active: QueryArg, ...events: QueryArg[]) {
  return db
    .selectFrom('webhooks')
    .select('event')
    .distinct()
    .where('project_id', '=', projectId as number)
    .where('event', 'in', events as string[])
    .where('is_active', '=', active as number);
}

/**
 * activeEvents' statement, compiled once per number of events asked (every upload asks one or two):
 * building it with Kysely on each upload was the largest query build left on an upload's path.
 * The first four counts asked are kept; past that, a count is built per run.
 */
const activeEventsQueries = new ReusableQueriesByShape<[QueryArg, QueryArg, ...QueryArg[]], { event: string }>(4);
/** Its answer, read once per SQLite transaction: a batch of new files shares one (db/transaction-reads.ts). */
const activeEventsReads = new TransactionReads<readonly string[]>();

export class WebhookRepo {
  private readonly db: Kysely<Database>;

  constructor(store: Db) {
    this.db = store.kysely;
  }

  async list(projectId: number): Promise<Subscription[]> {
    const rows = await this.db.selectFrom('webhooks').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
    return rows.map(toSubscription);
  }

  async get(projectId: number, id: number, db: DbOrTrx = this.db): Promise<Subscription | null> {
    const r = await db.selectFrom('webhooks').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
    return r ? toSubscription(r) : null;
  }

  /**
   * Which of `events` the project has an active subscription to, read through `db` (a change's
   * transaction): one statement for all the events of a change.
   */
  async activeEvents<E extends string>(db: DbOrTrx, projectId: number, events: readonly E[]): Promise<Set<E>> {
    if (events.length === 0) return new Set();
    const read = async () => (await activeEventsQueries.of(String(events.length), activeEventsBuilt)(db, projectId, 1, ...events)).rows.map((r) => r.event);
    const active = await activeEventsReads.once(db, `${projectId} ${events.join(' ')}`, read);
    // The query matched only `events`: each row's event is one of them.
    return new Set(active as readonly E[]);
  }

  /** Active subscriptions of the projects, to any event (the fan-outs' reads, subscription-reads.ts). */
  async activeOf(projectIds: readonly number[]): Promise<Subscription[]> {
    if (projectIds.length === 0) return [];
    const rows = await this.db.selectFrom('webhooks').selectAll().where('project_id', 'in', [...projectIds]).where('is_active', '=', 1).orderBy('id').execute();
    return rows.map(toSubscription);
  }

  /**
   * The project's active subscriptions to `events` (in id order) and its public key, read through
   * `db` (a change's transaction, which writes the deliveries of its events: event-deliveries.ts).
   */
  async activeWithPubKey(db: DbOrTrx, projectId: number, events: readonly string[]): Promise<{ pubKey: string; subscriptions: Subscription[] } | null> {
    const rows = await db
      .selectFrom('webhooks')
      .innerJoin('projects', 'projects.id', 'webhooks.project_id')
      .selectAll('webhooks')
      .select('projects.pub_key as project_pub_key')
      .where('webhooks.project_id', '=', projectId)
      .where('webhooks.event', 'in', [...events])
      .where('webhooks.is_active', '=', 1)
      .orderBy('webhooks.id')
      .execute();
    const first = rows[0];
    return first ? { pubKey: first.project_pub_key, subscriptions: rows.map(toSubscription) } : null;
  }

  async insert(s: Omit<Subscription, 'id'>): Promise<Subscription> {
    const row = await this.db
      .insertInto('webhooks')
      .values({
        project_id: s.projectId,
        event: s.event,
        target_url: s.targetUrl,
        is_active: s.isActive ? 1 : 0,
        signing_secret: s.signingSecret,
        version: s.version,
        created_us: s.createdUs,
        updated_us: s.updatedUs,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toSubscription(row);
  }

  async update(projectId: number, id: number, patch: SubscriptionPatch, updatedUs: number): Promise<Subscription | null> {
    const set: Updateable<WebhooksTable> = { updated_us: updatedUs };
    if (patch.event !== undefined) set.event = patch.event;
    if (patch.targetUrl !== undefined) set.target_url = patch.targetUrl;
    if (patch.isActive !== undefined) set.is_active = patch.isActive ? 1 : 0;
    if (patch.signingSecret !== undefined) set.signing_secret = patch.signingSecret;
    if (patch.version !== undefined) set.version = patch.version;
    const row = await this.db
      .updateTable('webhooks')
      .set(set)
      .where('project_id', '=', projectId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row ? toSubscription(row) : null;
  }

  async remove(projectId: number, id: number): Promise<boolean> {
    const r = await this.db.deleteFrom('webhooks').where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** Unsubscribe: by target and event, or every event of the target when `event` is absent. */
  async removeByTarget(projectId: number, targetUrl: string, event: string | undefined): Promise<number> {
    let q = this.db.deleteFrom('webhooks').where('project_id', '=', projectId).where('target_url', '=', targetUrl);
    if (event !== undefined) q = q.where('event', '=', event);
    const r = await q.executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** Subscriptions by id, whatever their project (the caller checks it); missing ids are left out. */
  async byIds(ids: readonly number[]): Promise<Subscription[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.selectFrom('webhooks').selectAll().where('id', 'in', [...ids]).execute();
    return rows.map(toSubscription);
  }

  /** Newest first; `beforeId` continues a previous page. */
  async deliveries(webhookId: number, limit: number, beforeId: number | null): Promise<DeliveryRecord[]> {
    let q = this.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId);
    if (beforeId !== null) q = q.where('id', '<', beforeId);
    const rows = await q.orderBy('id', 'desc').limit(boundLimit(limit)).execute();
    return rows.map(toDelivery);
  }

  async countDeliveries(webhookId: number): Promise<number> {
    const r = await this.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('webhook_id', '=', webhookId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async pruneDeliveries(olderThanUs: number): Promise<void> {
    await this.db.deleteFrom('webhook_deliveries').where('started_us', '<', olderThanUs).execute();
  }

  async removeDeliveries(webhookId: number): Promise<void> {
    await this.db.deleteFrom('webhook_deliveries').where('webhook_id', '=', webhookId).execute();
  }
}

/**
 * Records delivery attempts, several in one INSERT: the attempt records of the deliveries whose
 * outcomes commit together (JobOutcome.alongsideMerged).
 */
export const insertDeliveries: MergedStatement<NewDelivery, void> = Object.assign(
  async (db: Kysely<Database>, attempts: readonly NewDelivery[]) => {
    if (onPostgres(db)) await deliveriesInsertPostgres(attempts).execute(db);
    else await deliveriesInsertValues(db, attempts).execute();
    return attempts.map(() => undefined);
  },
  // New rows only: on PostgreSQL it shares one statement with the completions it belongs with.
  { part: (db: Kysely<Database>, attempts: readonly NewDelivery[]) => ({ query: deliveriesInsert(db, attempts), returnsRows: false, fromRows: () => attempts.map(() => undefined) }) },
);

/** The one INSERT of insertDeliveries, run alone or as a part of a combined statement. */
function deliveriesInsert(db: Kysely<Database>, attempts: readonly NewDelivery[]) {
  return onPostgres(db) ? deliveriesInsertPostgres(attempts) : deliveriesInsertValues(db, attempts);
}

const onPostgres = (db: Kysely<Database>) => db.getExecutor().adapter instanceof PostgresAdapter;

function deliveriesInsertValues(db: Kysely<Database>, attempts: readonly NewDelivery[]) {
  return db.insertInto('webhook_deliveries').values(attempts.map(deliveryRow));
}

/**
 * PostgreSQL: the records as one array parameter per column, one SQL text whatever their number
 * (as multi-row VALUES, twelve parameters a record to build, compile and bind, and a text as long
 * as the batch for PostgreSQL to parse).
 */
function deliveriesInsertPostgres(attempts: readonly NewDelivery[]) {
  const column = <T>(of: (d: NewDelivery) => T): T[] => attempts.map(of);
  return sql`INSERT INTO webhook_deliveries (webhook_id, project_id, event, event_id, attempt, target_url, started_us, duration_ms, status, success, error, response_excerpt)
    SELECT * FROM unnest(${column((d) => d.webhookId)}::bigint[], ${column((d) => d.projectId)}::bigint[], ${column((d) => d.event)}::text[],
      ${column((d) => d.eventId)}::bigint[], ${column((d) => d.attempt)}::integer[], ${column((d) => d.targetUrl)}::text[],
      ${column((d) => d.startedUs)}::bigint[], ${column((d) => d.durationMs)}::integer[], ${column((d) => d.status)}::integer[],
      ${column((d) => (d.success ? 1 : 0))}::integer[], ${column((d) => d.error)}::text[], ${column((d) => d.responseExcerpt)}::text[])`;
}

function deliveryRow(d: NewDelivery): Insertable<WebhookDeliveriesTable> {
  return {
    webhook_id: d.webhookId,
    project_id: d.projectId,
    event: d.event,
    event_id: d.eventId,
    attempt: d.attempt,
    target_url: d.targetUrl,
    started_us: d.startedUs,
    duration_ms: d.durationMs,
    status: d.status,
    success: d.success ? 1 : 0,
    error: d.error,
    response_excerpt: d.responseExcerpt,
  };
}

/**
 * A subscription from its row as JSON (PostgreSQL's to_jsonb, read by a delivery's claim): the
 * same columns, with numbers as JSON numbers, which toSubscription converts either way.
 */
export function subscriptionFromJson(row: Readonly<Record<string, unknown>>): Subscription {
  return toSubscription(row as unknown as Selectable<WebhooksTable>);
}

function toSubscription(r: Selectable<WebhooksTable>): Subscription {
  return {
    id: Number(r.id),
    projectId: Number(r.project_id),
    event: r.event,
    targetUrl: r.target_url,
    isActive: Number(r.is_active) === 1,
    signingSecret: r.signing_secret,
    version: r.version,
    createdUs: Number(r.created_us),
    updatedUs: Number(r.updated_us),
  };
}

function toDelivery(r: Selectable<WebhookDeliveriesTable>): DeliveryRecord {
  return {
    id: Number(r.id),
    webhookId: Number(r.webhook_id),
    event: r.event,
    eventId: Number(r.event_id),
    attempt: Number(r.attempt),
    targetUrl: r.target_url,
    startedUs: Number(r.started_us),
    durationMs: Number(r.duration_ms),
    status: r.status === null ? null : Number(r.status),
    success: Number(r.success) === 1,
    error: r.error,
    responseExcerpt: r.response_excerpt,
  };
}
