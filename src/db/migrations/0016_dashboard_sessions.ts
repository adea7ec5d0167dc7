import type { MigrationStep } from './types.js';

/**
 * Dashboard sessions (docs/dashboard.md): one row per signed-in browser. The cookie holds a random
 * token; only its SHA-256 is stored, so a copy of the database cannot be replayed as a login.
 */
export const dashboardSessions: MigrationStep = async (db) => {
  await db.schema
    .createTable('dashboard_sessions')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'bigint', (c) => c.notNull())
    .addColumn('pub_key', 'text', (c) => c.notNull())
    /** SHA-256 of the secret key used to sign in; null for an admin-token login. Revoking that key ends the session. */
    .addColumn('secret_hash', 'text')
    .addColumn('created_us', 'bigint', (c) => c.notNull())
    .addColumn('expires_us', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('dashboard_sessions_expires').on('dashboard_sessions').column('expires_us').execute();
};
