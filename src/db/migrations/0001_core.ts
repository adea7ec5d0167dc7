import { idType, type MigrationStep } from './types.js';

/** Projects, keys, files and the job queue. */
export const core: MigrationStep = async (db, dialect) => {
    await db.schema
      .createTable('projects')
      .addColumn('id', idType(dialect))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('pub_key', 'text', (c) => c.notNull().unique())
      .addColumn('autostore', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('signed_uploads', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_us', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('secret_keys')
      .addColumn('id', idType(dialect))
      .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id'))
      .addColumn('secret', 'text', (c) => c.notNull().unique())
      .addColumn('created_us', 'bigint', (c) => c.notNull())
      .addColumn('revoked_us', 'bigint')
      .execute();
    await db.schema
      .createTable('files')
      .addColumn('uuid', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id'))
      .addColumn('uploaded_us', 'bigint', (c) => c.notNull())
      .addColumn('stored_us', 'bigint')
      .addColumn('removed_us', 'bigint')
      .addColumn('size', 'bigint', (c) => c.notNull())
      .addColumn('mime_type', 'text', (c) => c.notNull())
      .addColumn('original_filename', 'text', (c) => c.notNull())
      .addColumn('filename', 'text', (c) => c.notNull())
      .addColumn('is_image', 'integer', (c) => c.notNull())
      .addColumn('is_ready', 'integer', (c) => c.notNull())
      .addColumn('content_info', 'text')
      .addColumn('metadata', 'text', (c) => c.notNull())
      .addColumn('appdata', 'text', (c) => c.notNull())
      .addColumn('blob_key', 'text')
      .addColumn('md5', 'text', (c) => c.notNull())
      .addColumn('source_url', 'text')
      .execute();
    // Unique upload times per project make the pagination cursor exact (see core/pagination.ts).
    await db.schema.createIndex('files_project_uploaded').on('files').columns(['project_id', 'uploaded_us']).unique().execute();
    await db.schema.createIndex('files_uploaded').on('files').column('uploaded_us').execute();
    await db.schema
      .createTable('jobs')
      .addColumn('id', idType(dialect))
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull().defaultTo('pending'))
      .addColumn('run_at_us', 'bigint', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('max_attempts', 'integer', (c) => c.notNull())
      .addColumn('lease_until_us', 'bigint')
      .addColumn('locked_by', 'text')
      .addColumn('last_error', 'text')
      .addColumn('unique_key', 'text', (c) => c.unique())
      .addColumn('created_us', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('jobs_due').on('jobs').columns(['state', 'run_at_us']).execute();
  };
