import type { MigrationStep } from './types.js';

/**
 * tus resumable uploads (docs/tus.md): one row per upload until it expires. `received` is the
 * durable offset: it only moves after the bytes up to it were fsynced in the node's staging file.
 */
export const tusMigration: MigrationStep = async (db) => {
  await db.schema
    .createTable('tus_uploads')
    // The upload's id in its URL: random, and the only capability a client needs to resume.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id'))
    // The file's uuid, chosen at creation so a completion that died can be finished idempotently.
    .addColumn('file_uuid', 'text', (c) => c.notNull().unique())
    .addColumn('length', 'bigint', (c) => c.notNull())
    .addColumn('received', 'bigint', (c) => c.notNull())
    // The Upload-Metadata header as the client sent it (HEAD echoes it).
    .addColumn('upload_metadata', 'text', (c) => c.notNull())
    .addColumn('filename', 'text')
    .addColumn('content_type', 'text', (c) => c.notNull())
    // 'auto' | '1' | '0'
    .addColumn('store', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('tags', 'text', (c) => c.notNull())
    // 'open' -> 'done'
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('created_us', 'bigint', (c) => c.notNull())
    .addColumn('expires_us', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tus_uploads_expires').on('tus_uploads').columns(['expires_us']).execute();
  await db.schema.createIndex('tus_uploads_project_state').on('tus_uploads').columns(['project_id', 'state']).execute();
};
