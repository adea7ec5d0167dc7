import type { MigrationStep } from './types.js';

/**
 * Fair queuing of jobs: a key whose jobs share a concurrency limit across nodes (jobs/queue.ts).
 * Existing rows get none, so they run without a shared limit.
 */
export const jobFairKey: MigrationStep = async (db) => {
  await db.schema.alterTable('jobs').addColumn('fair_key', 'text').execute();
  // Counting a kind's running jobs per key, on every fair claim.
  await db.schema.createIndex('jobs_kind_state_key').on('jobs').columns(['kind', 'state', 'fair_key']).execute();
};
