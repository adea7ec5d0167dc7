import type { MigrationStep } from './types.js';

/** Operations spent per upload token (signed uploads), counted atomically. */
export const tokenUsage: MigrationStep = async (db) => {
  await db.schema
    .createTable('token_usage')
    .addColumn('token_id', 'text', (c) => c.primaryKey())
    .addColumn('used', 'integer', (c) => c.notNull())
    .addColumn('expires_us', 'bigint', (c) => c.notNull())
    .execute();
};
