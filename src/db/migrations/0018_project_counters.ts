import { sql, type Kysely } from 'kysely';
import type { MigrationStep } from './types.js';

/**
 * List totals at any size (docs/files.md "Totals"): `GET /files/` answered `total` and `totals` with
 * four COUNT(*)s per page, a scan of the project's rows that grew with it. `project_counters` holds
 * them per project, moved by the services in the transaction of every change that creates a file or
 * group, moves a file between removed / stored / unstored, or deletes a group
 * (db/project-counters.ts). Backfilled here from the rows already there.
 *
 * With them, partial indexes for each filter of the file list (removed, live, live stored, live
 * unstored) in both of its orders (upload time; size, API v0.6), so a page reads its `limit` rows
 * from an index however few of the project's files match the filter.
 */
export const projectCounters: MigrationStep = async (db) => {
  await db.schema
    .createTable('project_counters')
    .addColumn('project_id', 'bigint', (c) => c.primaryKey().references('projects.id'))
    .addColumn('removed_files', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('stored_files', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('unstored_files', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('groups_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`insert into project_counters (project_id, removed_files, stored_files, unstored_files, groups_count)
    select p.id,
      (select count(*) from files f where f.project_id = p.id and f.removed_us is not null),
      (select count(*) from files f where f.project_id = p.id and f.removed_us is null and f.stored_us is not null),
      (select count(*) from files f where f.project_id = p.id and f.removed_us is null and f.stored_us is null),
      (select count(*) from file_groups g where g.project_id = p.id)
    from projects p`.execute(db);
  await listIndexes(db);
};

/** The file list's filters as index predicates: the repository writes the same terms (files/repo.ts). */
const FILTERS = {
  removed: sql`removed_us is not null`,
  live: sql`removed_us is null`,
  stored: sql`removed_us is null and stored_us is not null`,
  unstored: sql`removed_us is null and stored_us is null`,
} as const;

async function listIndexes(db: Kysely<unknown>): Promise<void> {
  for (const [name, where] of Object.entries(FILTERS)) {
    await sql`create index ${sql.id(`files_${name}_uploaded`)} on files (project_id, uploaded_us) where ${where}`.execute(db);
    await sql`create index ${sql.id(`files_${name}_size`)} on files (project_id, size, uploaded_us) where ${where}`.execute(db);
  }
  // Removed files keeping a stored time (imported ones may): `removed=true&stored=…` counts them
  // here and takes the rest from the counters. Empty unless an import brought such files.
  await sql`create index files_removed_stored on files (project_id) where removed_us is not null and stored_us is not null`.execute(db);
}
