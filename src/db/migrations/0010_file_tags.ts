import type { MigrationStep } from './types.js';

/**
 * File tags (docs/files.md): the list on the file row (what the file object shows), and one row per
 * (project, tag, file) so list filters and search find a tag's files through an index on both
 * databases. Multipart uploads keep the tags given at start until completion.
 */
export const fileTags: MigrationStep = async (db) => {
  await db.schema.alterTable('files').addColumn('tags', 'text', (c) => c.notNull().defaultTo('[]')).execute();
  await db.schema.alterTable('multipart_uploads').addColumn('tags', 'text', (c) => c.notNull().defaultTo('[]')).execute();
  await db.schema
    .createTable('file_tags')
    .addColumn('project_id', 'bigint', (c) => c.notNull())
    .addColumn('tag', 'text', (c) => c.notNull())
    .addColumn('uuid', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('file_tags_pk', ['project_id', 'tag', 'uuid'])
    .execute();
  await db.schema.createIndex('file_tags_uuid').on('file_tags').column('uuid').execute();
};
