import { idType, type MigrationStep } from './types.js';

/**
 * Conversion jobs (document and video): one row per accepted path of POST /convert/…/. The id is
 * the integer `token` the status endpoints take; the result file's uuid is chosen at submission
 * and answered at once, the row with its bytes appears when the job finishes.
 */
export const conversionsMigration: MigrationStep = async (db, dialect) => {
  await db.schema
    .createTable('conversion_jobs')
    .addColumn('id', idType(dialect))
    .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id'))
    // 'document' | 'video'
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('source_uuid', 'text', (c) => c.notNull())
    // The path as submitted (echoed as original_source) and its parsed target (JSON).
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    // 'auto' | '1' | '0'
    .addColumn('store', 'text', (c) => c.notNull())
    .addColumn('save_in_group', 'integer', (c) => c.notNull())
    .addColumn('result_uuid', 'text', (c) => c.notNull())
    // Video thumbnails / document pages: the group's uuid, chosen at submission (null: none).
    .addColumn('group_uuid', 'text')
    .addColumn('group_count', 'integer')
    // 'pending' | 'processing' | 'finished' | 'failed'
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('created_us', 'bigint', (c) => c.notNull())
    .addColumn('updated_us', 'bigint', (c) => c.notNull())
    .execute();
  // GET /convert/document/{uuid}/ lists the groups made from one source.
  await db.schema.createIndex('conversion_jobs_source').on('conversion_jobs').columns(['project_id', 'source_uuid']).execute();
};
