import type { MigrationStep } from './types.js';

/** Tables of the webhooks feature. */
export const webhooksMigration: MigrationStep = async () => {
  // Filled in by the webhooks feature.
};
