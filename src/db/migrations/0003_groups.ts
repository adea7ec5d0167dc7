import type { MigrationStep } from './types.js';

/** Tables of the groups feature. */
export const groupsMigration: MigrationStep = async () => {
  // Filled in by the groups feature.
};
