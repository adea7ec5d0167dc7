import type { MigrationStep } from './types.js';

/**
 * Indexes for claiming jobs of some kinds while thousands of other jobs are due (a burst of
 * webhook deliveries; jobs/queue.ts). A plain claim wants a kind's due jobs oldest first: with
 * only (state, run_at_us) it walked every pending job of every kind in time order. A fair claim
 * ranks each key's due jobs oldest first: with (kind, state, fair_key) that took a sort per claim.
 * The new fair index starts with the old one's columns. Counting a kind's running jobs per key
 * read every pending row for its lease: the partial index holds only leased rows, with the lease.
 */
export const jobClaimIndexes: MigrationStep = async (db) => {
  await db.schema.createIndex('jobs_kind_state_due').on('jobs').columns(['kind', 'state', 'run_at_us']).execute();
  await db.schema.createIndex('jobs_kind_state_key_due').on('jobs').columns(['kind', 'state', 'fair_key', 'run_at_us']).execute();
  await db.schema.dropIndex('jobs_kind_state_key').execute();
  await db.schema
    .createIndex('jobs_leased')
    .on('jobs')
    .columns(['kind', 'state', 'fair_key', 'lease_until_us'])
    .where('lease_until_us', 'is not', null)
    .execute();
};
