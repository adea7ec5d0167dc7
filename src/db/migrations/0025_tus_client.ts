import type { MigrationStep } from './types.js';

/**
 * tus: the client address group that created each upload (docs/tus.md, "Limits"). What one
 * address group may reserve in a project is bounded by the total Upload-Length of its open
 * uploads there. Rows from before carry '' (one group of their own, expired within a TTL).
 */
export const tusClient: MigrationStep = async (db) => {
  await db.schema.alterTable('tus_uploads').addColumn('client', 'text', (c) => c.notNull().defaultTo('')).execute();
  await db.schema.createIndex('tus_uploads_project_client').on('tus_uploads').columns(['project_id', 'client', 'state']).execute();
};
