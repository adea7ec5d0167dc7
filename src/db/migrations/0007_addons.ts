import type { MigrationStep } from './types.js';

/**
 * Tables of the add-ons feature: one row per execution (what the status endpoint answers from,
 * and what a re-run after a crash resumes), and each project's add-ons to run on upload.
 */
export const addonsMigration: MigrationStep = async (db) => {
  await db.schema
    .createTable('addon_executions')
    .addColumn('request_id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id'))
    .addColumn('addon', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    // JSON: the parsed params.
    .addColumn('params', 'text', (c) => c.notNull())
    // 'in_progress' | 'done' | 'error'
    .addColumn('status', 'text', (c) => c.notNull())
    // `<addon>:<target>` while in progress, null after: the unique index refuses a concurrent call.
    .addColumn('running_key', 'text', (c) => c.unique())
    // For add-ons that make a file: its uuid, chosen up front so a re-run after a crash makes no second file.
    .addColumn('result_file', 'text')
    .addColumn('error', 'text')
    .addColumn('created_us', 'bigint', (c) => c.notNull())
    .addColumn('updated_us', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('addon_executions_created').on('addon_executions').column('created_us').execute();
  await db.schema
    .createTable('addon_project_settings')
    .addColumn('project_id', 'bigint', (c) => c.primaryKey().references('projects.id'))
    // JSON array of add-on names run on every upload of the project.
    .addColumn('on_upload', 'text', (c) => c.notNull())
    .addColumn('updated_us', 'bigint', (c) => c.notNull())
    .execute();
};
