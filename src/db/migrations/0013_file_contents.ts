import type { MigrationStep } from './types.js';

/**
 * Identical bytes stored once (docs/storage.md): one row per (project, SHA-256) names the blob that
 * holds those bytes; file rows point at it through `blob_key`, which therefore stops being unique
 * to one file. The index on `files.blob_key` answers "does any row still use these bytes?" when a
 * file's bytes are reclaimed and when the leftovers sweep judges a key. Files stored before this
 * migration keep their own keys and have no content row: they are never shared.
 */
export const fileContents: MigrationStep = async (db) => {
  await db.schema
    .createTable('file_contents')
    .addColumn('project_id', 'bigint', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('blob_key', 'text', (c) => c.notNull().unique())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('created_us', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('file_contents_pk', ['project_id', 'sha256'])
    .execute();
  await db.schema.createIndex('files_blob_key').on('files').column('blob_key').execute();
};
