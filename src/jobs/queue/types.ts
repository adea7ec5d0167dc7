/**
 * The job queue's types: what an enqueue names, what a claim asks for and hands out, and the
 * writes that go with a job's outcome (see jobs/queue.ts for the queue's contracts).
 */
import type { Selectable, Transaction } from 'kysely';
import type { BeforeWrite } from '../../db/group-commit.js';
import type { Database } from '../../db/schema.js';
import type { JobKind, JobPayloads } from '../kinds.js';

export interface EnqueueOptions<K extends JobKind = JobKind> {
  kind: K;
  payload: JobPayloads[K];
  /** Earliest run time; default now. */
  runAtUs?: number;
  maxAttempts?: number;
  /** At most one job with this key is ever enqueued; a second enqueue is silently dropped. */
  uniqueKey?: string;
  /** Jobs sharing a fair key share its per-key concurrency limit (see JobHandler.perKeyLimit). */
  fairKey?: string;
}

export interface ClaimedJob<K extends JobKind = JobKind> {
  id: number;
  kind: K;
  payload: JobPayloads[K];
  /** 1 for the first run. */
  attempt: number;
  maxAttempts: number;
  /** The worker holding the lease (part of the fencing token with `attempt`). */
  lockedBy: string;
  /** When the job row was written (the time of the change that caused it). */
  createdUs: number;
  /**
   * The row ClaimOptions.read named, as stored at the claim (null when there is none); absent
   * when the claim read none (SQLite, a claim without `read`).
   */
  readRow?: ClaimReadRow | null;
}

/**
 * A row of another table that a job's run reads first (a webhook delivery's subscription), read by
 * the claim's own statement on PostgreSQL: the row of `table` whose `id` is the payload's field
 * `idField`. The run then skips that round trip, on the path of every job; it still sees the row
 * as stored when it started (its claim). SQLite claims without it: the run reads the row itself.
 */
export interface ClaimRead {
  table: keyof Database;
  idField: string;
}

/** A ClaimRead's row, as PostgreSQL's to_jsonb gives it: column name to JSON value. */
export type ClaimReadRow = Readonly<Record<string, unknown>>;

export interface ClaimOptions {
  kinds: readonly JobKind[];
  limit: number;
  leaseMs: number;
  /** Most running jobs per fair key, counted over every node; absent = no per-key limit. */
  perKeyLimit?: number;
  /** A row read with each claimed job (PostgreSQL's fair claims; see ClaimRead). */
  read?: ClaimRead;
}

export const DEFAULT_MAX_ATTEMPTS = 10;

/**
 * A write that belongs with a job's outcome (a delivery's attempt record, a fan-out's new jobs):
 * committed in the same transaction as the completion or failure, so a job costs one commit, not
 * one for its own writes and another for its outcome. Run even when the claim was lost (what the
 * run did still happened), and possibly twice until committed (see db/group-commit.ts): inserts
 * and writes guarded by a unique key qualify.
 */
export type OutcomeWrite = ((trx: Transaction<Database>) => Promise<void>) | BeforeWrite;

export type JobRow = Selectable<Database['jobs']>;
/**
 * The columns a claim hands out (ClaimedJob's), the only ones claims return: the others were never
 * read, yet on SQLite every RETURNING column of each claimed row is copied twice (into SQLite's
 * result table, then into a JS object), and on PostgreSQL sent and parsed.
 */
export const CLAIMED_COLUMNS = ['id', 'kind', 'payload', 'attempts', 'max_attempts', 'locked_by', 'created_us'] as const satisfies readonly (keyof JobRow)[];
/** A claimed job's row, with the ClaimRead's row when the claim read one. */
export type ClaimedRow = Pick<JobRow, (typeof CLAIMED_COLUMNS)[number]> & { read_row?: ClaimReadRow | null };
