/**
 * The jobs that outcomes write (a fan-out's delivery jobs), as a merged statement that can join a
 * group commit's combined statement on PostgreSQL (db/combined-statement.ts): one INSERT of the
 * batch's jobs as a part, their NOTIFY as the part's effect. Through `enqueueMerged` a fan-out's
 * outcome was a transaction: BEGIN, the jobs' INSERT, `pg_notify`, the completions' UPDATE, COMMIT,
 * five round trips in the node's group commit, in front of the deliveries' claims and outcomes.
 * Combined it is one statement, atomic as a statement is, committing (and notifying) on its own.
 * The rows, the dropped repeats of a unique key and the wake-up are enqueueMany's; SQLite runs
 * `enqueueMerged` as before (no round trips to save).
 */
import { sql, type Kysely } from 'kysely';
import type { MergedPart } from '../db/combined-statement.js';
import type { MergedStatement } from '../db/group-commit.js';
import type { Database } from '../db/schema.js';
import { nowUs } from '../core/time.js';
import { DEFAULT_MAX_ATTEMPTS, enqueueMerged, type EnqueueOptions } from './queue.js';
import { JOBS_CHANNEL } from './wake.js';

type Lists = readonly (readonly EnqueueOptions[])[];

export const enqueueCombinable: MergedStatement<readonly EnqueueOptions[], void> = Object.assign((db: Kysely<Database>, lists: Lists) => enqueueMerged(db, lists), {
  part: (db: Kysely<Database>, lists: Lists): MergedPart<void> => {
    const now = nowUs();
    const rows = lists.flat().map((opts) => ({
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
    // Every node's workers (this one's too, through its LISTEN) hear of the kinds due now at the
    // commit, as from the NOTIFY of an enqueue in a transaction.
    const due = [...new Set(rows.filter((r) => r.run_at_us <= now).map((r) => r.kind))];
    const effects = due.map((kind) => sql`pg_notify(${JOBS_CHANNEL}, current_schema() || ' ' || ${kind}::text)`);
    return { query, returnsRows: false, fromRows: () => lists.map(() => undefined), effects };
  },
});
