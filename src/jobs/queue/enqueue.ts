/** Writing jobs: inside the caller's transaction, then waking the workers for the kinds due now. */
import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely';
import type { MergedPart } from '../../db/combined-statement.js';
import type { DbOrTrx } from '../../db/connect.js';
import type { MergedStatement } from '../../db/group-commit.js';
import type { Database } from '../../db/schema.js';
import { nowUs } from '../../core/time.js';
import type { JobKind } from '../kinds.js';
import { JOBS_CHANNEL, localEnqueues } from '../wake.js';
import { DEFAULT_MAX_ATTEMPTS, type EnqueueOptions } from './types.js';

/**
 * Writes a job. Due jobs wake the workers: at once in this process (see jobs/wake.ts for why that
 * is after the commit on SQLite), and through NOTIFY — delivered at commit — on PostgreSQL.
 */
export async function enqueue<K extends JobKind>(db: DbOrTrx, opts: EnqueueOptions<K>): Promise<void> {
  await enqueueMany(db, [opts]);
}

/**
 * Writes several jobs in one INSERT (a fan-out's deliveries: one round trip instead of one each),
 * then wakes the workers for each kind due now, as `enqueue`.
 */
export async function enqueueMany<K extends JobKind>(db: DbOrTrx, jobs: readonly EnqueueOptions<K>[]): Promise<void> {
  if (jobs.length === 0) return;
  const { query, due } = jobsInsert(db, jobs);
  await query.execute();
  for (const kind of due) await wake(db, kind);
}

/** The one INSERT of `jobs` and the kinds due now among them (to wake). */
function jobsInsert(db: DbOrTrx, jobs: readonly EnqueueOptions[]) {
  const now = nowUs();
  const rows = jobs.map((opts) => ({
    kind: opts.kind,
    payload: JSON.stringify(opts.payload ?? null),
    run_at_us: opts.runAtUs ?? now,
    max_attempts: opts.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    unique_key: opts.uniqueKey ?? null,
    fair_key: opts.fairKey ?? null,
    created_us: now,
  }));
  let query = db.insertInto('jobs').values(rows);
  // A repeat of a unique key (a fan-out run again) is dropped, the rest of the rows still written.
  if (rows.some((r) => r.unique_key !== null)) query = query.onConflict((oc) => oc.column('unique_key').doNothing());
  return { query, due: new Set(rows.filter((r) => r.run_at_us <= now).map((r) => r.kind)) };
}

/** The NOTIFY that wakes every node's workers (this one's too, through its LISTEN) for `kind`. */
const notify = (kind: string): RawBuilder<unknown> => sql`pg_notify(${JOBS_CHANNEL}, current_schema() || ' ' || ${kind}::text)`;

/**
 * enqueueMany as a merged statement (JobOutcome.alongsideMerged): the jobs that the outcomes of
 * one group commit write (the fan-outs' deliveries) are one INSERT, not one per outcome.
 */
export const enqueueMerged: MergedStatement<readonly EnqueueOptions[], void> = async (db, lists) => {
  await enqueueMany(db, lists.flat());
  return lists.map(() => undefined);
};

type JobLists = readonly (readonly EnqueueOptions[])[];

/**
 * enqueueMerged that can also join a group commit's combined statement on PostgreSQL
 * (db/combined-statement.ts): the batch's jobs are one INSERT part, their NOTIFY its effect. A
 * fan-out's outcome through enqueueMerged was a transaction: BEGIN, the delivery jobs' INSERT,
 * pg_notify, the completions' UPDATE, COMMIT, five round trips in the node's group commit, in
 * front of the deliveries' claims and outcomes. Combined it is one statement, atomic as a
 * statement is; its notification is delivered at its commit, as a transaction's is at COMMIT.
 * Only for jobs that nothing else in the batch depends on (the parts of a statement share one
 * snapshot). SQLite runs it as enqueueMerged.
 */
export const enqueueCombinable: MergedStatement<readonly EnqueueOptions[], void> = Object.assign((db: Kysely<Database>, lists: JobLists) => enqueueMerged(db, lists), {
  part: (db: Kysely<Database>, lists: JobLists): MergedPart<void> => {
    const { query, due } = jobsInsert(db, lists.flat());
    return { query, returnsRows: false, fromRows: () => lists.map(() => undefined), effects: [...due].map(notify) };
  },
});

/**
 * Transactions that already sent a NOTIFY for a kind. PostgreSQL folds the identical
 * notifications of a transaction into one anyway, but each pg_notify is a round trip: a batch
 * store of 100 files sent 100, and a group commit of fan-outs one per delivery job.
 */
const notifiedIn = new WeakMap<DbOrTrx, Set<string>>();

async function wake(db: DbOrTrx, kind: string): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  if (postgres) {
    const sent = db.isTransaction ? (notifiedIn.get(db) ?? new Set<string>()) : null;
    if (!sent?.has(kind)) await sql`SELECT ${notify(kind)}`.execute(db);
    if (sent) notifiedIn.set(db, sent.add(kind));
  }
  if (!postgres || !db.isTransaction) localEnqueues.emit(kind);
}
