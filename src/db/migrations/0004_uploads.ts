import type { MigrationStep } from './types.js';

/**
 * Tables of the uploads feature: multipart uploads in flight, from_url fetch tasks, and the server
 * secrets that sign part URLs (kept in the DB so every node of a cluster signs and checks alike).
 */
export const uploadsMigration: MigrationStep = async (db) => {
  await db.schema
    .createTable('multipart_uploads')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id'))
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('part_size', 'bigint', (c) => c.notNull())
    .addColumn('parts', 'integer', (c) => c.notNull())
    // 'auto' | '1' | '0': the store choice made at start, applied at completion.
    .addColumn('store', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    // 'open' -> 'completing' -> 'done'; a failed completion goes back to 'open'.
    .addColumn('state', 'text', (c) => c.notNull())
    // When a completion took the upload; a stale claim (its node died) may be taken over.
    .addColumn('claimed_us', 'bigint')
    .addColumn('created_us', 'bigint', (c) => c.notNull())
    .addColumn('expires_us', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('from_url_tasks')
    .addColumn('token', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id'))
    .addColumn('source_url', 'text', (c) => c.notNull())
    // JSON: filename, store, metadata, saveDuplicates.
    .addColumn('options', 'text', (c) => c.notNull())
    // 'waiting' | 'progress' | 'success' | 'error'
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('done', 'bigint', (c) => c.notNull())
    .addColumn('total', 'bigint')
    .addColumn('file_uuid', 'text')
    .addColumn('error', 'text')
    .addColumn('error_code', 'text')
    .addColumn('created_us', 'bigint', (c) => c.notNull())
    .addColumn('updated_us', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('server_secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_us', 'bigint', (c) => c.notNull())
    .execute();
  // check_URL_duplicates looks files up by their source URL.
  await db.schema.createIndex('files_project_source_url').on('files').columns(['project_id', 'source_url']).execute();
};
