/**
 * `state = 'pending'` for a statement that finds its rows by id (a claim's UPDATE of the rows it
 * picked, a completion of its claims), in a form neither store matches to an index. Written plain,
 * both planners preferred walking every pending job's entry in an index of the state (SQLite's
 * jobs_due; PostgreSQL's partial jobs_pending_claim while the table has no statistics yet) to
 * fetching the few rows by id: in a webhook burst a cost on every claim and completion that grew
 * with the backlog (on SQLite 0.3 ms a completion with 500 jobs pending, 0.02 ms by id).
 */
import { sql, type RawBuilder } from 'kysely';

export const stillPending = (column: 'state' | 'jobs.state' = 'state'): RawBuilder<boolean> => sql<boolean>`(${sql.ref(column)} = 'pending') IS TRUE`;
