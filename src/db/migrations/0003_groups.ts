import { idType, type MigrationStep } from './types.js';

/**
 * Tables of the groups feature: groups and their ordered members, and the project's custom
 * storages (S3-compatible buckets that remote copies write to).
 */
export const groupsMigration: MigrationStep = async (db, dialect) => {
  await db.schema
    .createTable('file_groups')
    // The group's uuid; the public id is `<uuid>~<files_count>`.
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id'))
    .addColumn('files_count', 'integer', (c) => c.notNull())
    .addColumn('created_us', 'bigint', (c) => c.notNull())
    .execute();
  // Unique creation times per project make the list cursor exact (as for files).
  await db.schema.createIndex('file_groups_project_created').on('file_groups').columns(['project_id', 'created_us']).unique().execute();
  await db.schema
    .createTable('file_group_members')
    .addColumn('group_uuid', 'text', (c) => c.notNull().references('file_groups.uuid').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    // No foreign key to files: a group outlives the rows of purged files (shown as null).
    .addColumn('file_uuid', 'text', (c) => c.notNull())
    // Operations without the leading `-/`, trailing `/` kept; '' when none.
    .addColumn('effects', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('file_group_members_pk', ['group_uuid', 'position'])
    .execute();
  await db.schema
    .createTable('custom_storages')
    .addColumn('id', idType(dialect))
    .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('endpoint', 'text')
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('bucket', 'text', (c) => c.notNull())
    .addColumn('access_key_id', 'text', (c) => c.notNull())
    .addColumn('secret_access_key', 'text', (c) => c.notNull())
    .addColumn('force_path_style', 'integer', (c) => c.notNull())
    .addColumn('pattern', 'text', (c) => c.notNull())
    .addColumn('created_us', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('custom_storages_project_name').on('custom_storages').columns(['project_id', 'name']).unique().execute();
};
