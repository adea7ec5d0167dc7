/** Writing a job's outcome, fenced by its claim: a single job's, or a batch's completions in one statement. */
import type { Kysely, Updateable } from 'kysely';
import type { DbOrTrx } from '../../db/connect.js';
import type { MergedStatement } from '../../db/group-commit.js';
import type { Database } from '../../db/schema.js';
import { stillPending } from './still-pending.js';
import type { ClaimedJob, JobRow } from './types.js';

/** Updates the job only while it still carries this claim (see the fencing note in jobs/queue.ts). */
export async function fencedUpdate(db: DbOrTrx, job: ClaimedJob, set: Updateable<Database['jobs']>): Promise<boolean> {
  const r = await db
    .updateTable('jobs')
    .set(set)
    .where('id', '=', job.id)
    .where('state', '=', 'pending')
    .where('locked_by', '=', job.lockedBy)
    .where('attempts', '=', job.attempt)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * Marks every job of `jobs` done that still carries its claim (fenced like fencedUpdate), in one
 * UPDATE; true for each one it marked. The list is padded to a power of two with repeats of its
 * last claim (a repeated term matches the same row) so that few distinct SQL texts exist: SQLite
 * keeps a prepared statement per text (statement-cache.ts). It touches only the rows of its own
 * claims, so on PostgreSQL it joins the batch's other merged writes in one statement (`part`).
 */
export const completeClaims: MergedStatement<ClaimedJob, boolean> = Object.assign(
  async (db: Kysely<Database>, jobs: readonly ClaimedJob[]) => completedOf(jobs, await completion(db, jobs).execute()),
  { part: (db: Kysely<Database>, jobs: readonly ClaimedJob[]) => ({ query: completion(db, jobs), returnsRows: true, fromRows: (rows: readonly Record<string, unknown>[]) => completedOf(jobs, rows as readonly CompletedRow[]) }) },
);

type CompletedRow = Pick<JobRow, 'id' | 'locked_by' | 'attempts'>;

/**
 * The fenced UPDATE of completeClaims, returning the claims it marked. The rows are found by their
 * ids (still-pending.ts).
 */
function completion(db: Kysely<Database>, jobs: readonly ClaimedJob[]) {
  const terms = [...jobs];
  while (terms.length & (terms.length - 1)) terms.push(jobs[jobs.length - 1]!);
  return db
    .updateTable('jobs')
    .set({ state: 'done', lease_until_us: null, last_error: null })
    .where(stillPending())
    .where((eb) => eb.or(terms.map((j) => eb.and([eb('id', '=', j.id), eb('locked_by', '=', j.lockedBy), eb('attempts', '=', j.attempt)]))))
    .returning(['id', 'locked_by', 'attempts']);
}

/** For each job, whether its claim is among the marked rows. */
function completedOf(jobs: readonly ClaimedJob[], rows: readonly CompletedRow[]): boolean[] {
  const claim = (id: number, lockedBy: string | null, attempts: number) => `${id}:${attempts}:${lockedBy ?? ''}`;
  const done = new Set(rows.map((r) => claim(Number(r.id), r.locked_by, Number(r.attempts))));
  return jobs.map((j) => done.has(claim(j.id, j.lockedBy, j.attempt)));
}
