import { sql } from 'kysely';
import type { MigrationStep } from './types.js';

/**
 * SQLite: two of the `files` indexes that every new row entered now hold only the rows their
 * query reads, so a direct upload of a stored file writes two b-trees less (an index per
 * documented filter or order, and small uploads' WAL pages; docs/performance.md).
 *   - `files_uploaded` (upload time over all projects) served only the expiry sweep, which reads
 *     unstored, live files: `files_unstored_expiry` holds those alone.
 *   - `files_project_source_url` was meant for the `/from_url/` duplicate check (`source_url = ?`,
 *     newest first), but without the upload time SQLite preferred walking the project's live files
 *     in time order (`files_live_uploaded`) and never read it. Now (project, URL, time) over rows
 *     with a URL (`source_url = ?` implies not null): the check reads it, and rows without a source
 *     URL (direct uploads, multipart, tus) no longer enter it.
 * PostgreSQL: unchanged (its planner also walks `files_uploaded` for a one-project list page,
 * docs/performance.md).
 */
export const uploadIndexes: MigrationStep = async (db, dialect) => {
  if (dialect === 'postgres') return;
  await sql`drop index files_uploaded`.execute(db);
  await sql`create index files_unstored_expiry on files (uploaded_us) where removed_us is null and stored_us is null`.execute(db);
  await sql`drop index files_project_source_url`.execute(db);
  await sql`create index files_project_source_url on files (project_id, source_url, uploaded_us) where source_url is not null`.execute(db);
};
