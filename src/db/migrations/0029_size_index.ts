import { sql } from 'kysely';
import type { MigrationStep } from './types.js';

/**
 * SQLite: `files_project_size` (project, size) over every row goes. A search always names the
 * files it reads (live, removed, stored or unstored: src/files/search/repo.ts), and each of those
 * has a partial index on (project, size, upload time) (migration 0018), which SQLite reads for a
 * size condition instead, over fewer rows. Every new row entered this index: one b-tree and one
 * WAL page less per stored direct upload (docs/performance.md).
 * PostgreSQL: unchanged (its planner weighs indexes by statistics; not measured there).
 */
export const sizeIndex: MigrationStep = async (db, dialect) => {
  if (dialect === 'postgres') return;
  await sql`drop index files_project_size`.execute(db);
};
