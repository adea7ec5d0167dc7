/** Writing a job's outcome, fenced by its claim: a single job's, or a batch's completions in one statement. */
import { PostgresAdapter, sql, type Kysely, type RawBuilder, type Updateable } from 'kysely';
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
 * UPDATE; true for each one it marked. It touches only the rows of its own claims, so on
 * PostgreSQL it joins the batch's other merged writes in one statement (`part`).
 */
export const completeClaims: MergedStatement<ClaimedJob, boolean> = Object.assign(
  async (db: Kysely<Database>, jobs: readonly ClaimedJob[]) => completedOf(jobs, (await completion(db, jobs).execute(db)).rows),
  { part: (db: Kysely<Database>, jobs: readonly ClaimedJob[]) => ({ query: completion(db, jobs), returnsRows: true, fromRows: (rows: readonly Record<string, unknown>[]) => completedOf(jobs, rows as readonly CompletedRow[]) }) },
);

type CompletedRow = Pick<JobRow, 'id' | 'locked_by' | 'attempts'>;

/**
 * The fenced UPDATE of completeClaims, returning the claims it marked, as raw SQL: through the
 * query builder, three comparisons a claim were built, frozen and compiled for every batch, a
 * tenth of the main thread's samples in a webhook burst on SQLite.
 */
function completion(db: Kysely<Database>, jobs: readonly ClaimedJob[]): RawBuilder<CompletedRow> {
  return db.getExecutor().adapter instanceof PostgresAdapter ? completionPostgres(jobs) : completionSqlite(jobs);
}

/**
 * PostgreSQL: the claims as three array parameters, one SQL text whatever their number. A term
 * per claim (`id = $1 AND locked_by = $2 AND attempts = $3 OR …`, 64 of them in a burst's batch)
 * cost PostgreSQL twice the planning and execution (a BitmapOr of an index scan per term). The
 * rows are found by primary key (`id = ANY`), then matched against their claims.
 */
function completionPostgres(jobs: readonly ClaimedJob[]): RawBuilder<CompletedRow> {
  const ids = jobs.map((j) => j.id);
  return sql<CompletedRow>`UPDATE jobs SET state = 'done', lease_until_us = NULL, last_error = NULL
    FROM unnest(${ids}::bigint[], ${jobs.map((j) => j.lockedBy)}::text[], ${jobs.map((j) => j.attempt)}::integer[]) AS c(id, locked_by, attempts)
    WHERE jobs.id = ANY (${ids}::bigint[]) AND jobs.id = c.id AND jobs.locked_by = c.locked_by AND jobs.attempts = c.attempts
      AND ${stillPending('jobs.state')}
    RETURNING jobs.id, jobs.locked_by, jobs.attempts`;
}

/**
 * SQLite: a term per claim, the list padded to a power of two with repeats of its last claim (a
 * repeated term matches the same row) so that few distinct SQL texts exist: SQLite keeps a
 * prepared statement per text (statement-cache.ts). The rows are found by their ids
 * (still-pending.ts).
 */
function completionSqlite(jobs: readonly ClaimedJob[]): RawBuilder<CompletedRow> {
  const terms = [...jobs];
  while (terms.length & (terms.length - 1)) terms.push(jobs[jobs.length - 1]!);
  const match = sql.join(
    terms.map((j) => sql`(id = ${j.id} AND locked_by = ${j.lockedBy} AND attempts = ${j.attempt})`),
    sql` OR `,
  );
  return sql<CompletedRow>`UPDATE jobs SET state = 'done', lease_until_us = NULL, last_error = NULL
    WHERE ${stillPending()} AND (${match})
    RETURNING id, locked_by, attempts`;
}

/** For each job, whether its claim is among the marked rows. */
function completedOf(jobs: readonly ClaimedJob[], rows: readonly CompletedRow[]): boolean[] {
  const claim = (id: number, lockedBy: string | null, attempts: number) => `${id}:${attempts}:${lockedBy ?? ''}`;
  const done = new Set(rows.map((r) => claim(Number(r.id), r.locked_by, Number(r.attempts))));
  return jobs.map((j) => done.has(claim(j.id, j.lockedBy, j.attempt)));
}
