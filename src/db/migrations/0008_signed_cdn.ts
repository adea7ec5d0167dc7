import type { MigrationStep } from './types.js';

/**
 * Signed CDN URLs (docs/cdn-signed-urls.md): whether a project's CDN URLs need a token, and the
 * hex key tokens are signed with (separate from the REST secret keys, as the hosted service's
 * token builders take one hex key).
 */
export const signedCdn: MigrationStep = async (db) => {
  await db.schema.alterTable('projects').addColumn('signed_cdn', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('projects').addColumn('cdn_secret', 'text').execute();
};
