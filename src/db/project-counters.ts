/**
 * Per-project counters behind the list answers' `total` / `totals` (migration 0018): files by
 * state and groups. A service moves them with `adjustCounters` inside the transaction of the change
 * itself, so they commit or roll back with it. The move is one `INSERT … ON CONFLICT DO UPDATE SET
 * n = n + delta`: concurrent transactions on any node add up (PostgreSQL locks the row until commit;
 * SQLite transactions are serial), and a project without a row yet gets one.
 *
 * Callers put it last in their transaction and once per project (a batch sums its moves first):
 * the row lock is then held only until the commit, and no two transactions take it and a file
 * row's lock in opposite orders.
 */
import { CompiledQuery, sql, type Kysely, type Selectable } from 'kysely';
import type { DbOrTrx } from './connect.js';
import { ReadBatcher } from './read-batcher.js';
import { reusableQuery } from './reusable-query.js';
import type { Database } from './schema.js';

/** A file's place in the counters: the file list's three kinds (`totals`). */
export type FileState = 'removed' | 'stored' | 'unstored';

export interface CounterDelta {
  removed?: number;
  stored?: number;
  unstored?: number;
  groups?: number;
}

export interface ProjectCounts {
  removed: number;
  stored: number;
  unstored: number;
  groups: number;
}

export function fileState(f: { storedUs: number | null; removedUs: number | null }): FileState {
  if (f.removedUs !== null) return 'removed';
  return f.storedUs !== null ? 'stored' : 'unstored';
}

/** The move of one file from `before` (null: the file is new) to `after`; empty when it stays put. */
export function fileMove(before: FileState | null, after: FileState): CounterDelta {
  if (before === after) return {};
  const delta: CounterDelta = { [after]: 1 };
  if (before !== null) delta[before] = -1;
  return delta;
}

/** The sum of several moves (a batch applies them once, at its end). */
export function addDeltas(...deltas: CounterDelta[]): CounterDelta {
  const sum: Required<CounterDelta> = { removed: 0, stored: 0, unstored: 0, groups: 0 };
  for (const d of deltas) for (const k of Object.keys(sum) as Array<keyof CounterDelta>) sum[k] += d[k] ?? 0;
  return sum;
}

function isEmpty(d: CounterDelta): boolean {
  return !d.removed && !d.stored && !d.unstored && !d.groups;
}

export async function adjustCounters(trx: DbOrTrx, projectId: number, delta: CounterDelta): Promise<void> {
  if (isEmpty(delta)) return;
  await addToCounters(trx, projectId, delta.removed ?? 0, delta.stored ?? 0, delta.unstored ?? 0, delta.groups ?? 0);
}

// Every new file and every state change runs it: compiled once per store (reusable-query.ts).
const addToCounters = reusableQuery((trx: DbOrTrx, projectId: number, removed: number, stored: number, unstored: number, groups: number) =>
  trx
    .insertInto('project_counters')
    .values({ project_id: projectId, removed_files: removed, stored_files: stored, unstored_files: unstored, groups_count: groups })
    .onConflict((oc) =>
      oc.column('project_id').doUpdateSet({
        removed_files: sql<number>`project_counters.removed_files + excluded.removed_files`,
        stored_files: sql<number>`project_counters.stored_files + excluded.stored_files`,
        unstored_files: sql<number>`project_counters.unstored_files + excluded.unstored_files`,
        groups_count: sql<number>`project_counters.groups_count + excluded.groups_count`,
      }),
    ),
);

type CountersRow = Selectable<Database['project_counters']>;

// Every file list reads it: compiled once per store.
const countersOf = reusableQuery((db: DbOrTrx, projectId: number) => db.selectFrom('project_counters').selectAll().where('project_id', '=', projectId));

/** The project's counts; zeros for a project nothing was ever counted in. */
export async function readCounters(db: DbOrTrx, projectId: number): Promise<ProjectCounts> {
  return countsOf((await countersOf(db, projectId)).rows[0]);
}

/**
 * PostgreSQL: the counts of projects read together when asked for in the same turn of the event
 * loop (read-batcher.ts): concurrent list requests of a project share one round trip. Outside
 * transactions only; as fresh as a lone read made when asked.
 */
export function countersBatcher(db: Kysely<Database>): ReadBatcher<number, ProjectCounts> {
  return new ReadBatcher<number, ProjectCounts>(async (projectIds) => {
    const { rows } = await db.executeQuery<CountersRow>(CompiledQuery.raw('SELECT * FROM project_counters WHERE project_id = ANY($1::bigint[])', [projectIds]));
    const byProject = new Map(rows.map((r) => [Number(r.project_id), countsOf(r)]));
    return new Map(projectIds.map((id) => [id, byProject.get(id) ?? countsOf(undefined)]));
  });
}

/** The columns `countsOf` reads: null (as from an outer join) or a missing row counts as zero. */
export type CountColumns = { [K in 'removed_files' | 'stored_files' | 'unstored_files' | 'groups_count']: number | null };

/** The counts of a counters row read by the caller (a list's page read with them, files/list/batched/repo.ts). */
export function countsOf(r: CountColumns | undefined): ProjectCounts {
  return {
    removed: Number(r?.removed_files ?? 0),
    stored: Number(r?.stored_files ?? 0),
    unstored: Number(r?.unstored_files ?? 0),
    groups: Number(r?.groups_count ?? 0),
  };
}
