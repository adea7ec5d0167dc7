import type { MigrationStep } from './types.js';

/**
 * Files removed through the API can be stored again until `restore_until_us` (docs/files.md,
 * "Removing and restoring"); their bytes are reclaimed after it. Null: the removal is final (an
 * unstored file's expiry, an add-on's removal, rows from before this column). PostgreSQL adds a
 * nullable column without a default in place, without rewriting the table.
 */
export const fileRestore: MigrationStep = async (db) => {
  await db.schema.alterTable('files').addColumn('restore_until_us', 'bigint').execute();
};
