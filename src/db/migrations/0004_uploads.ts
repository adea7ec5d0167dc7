import type { MigrationStep } from './types.js';

/** Tables of the uploads feature. */
export const uploadsMigration: MigrationStep = async () => {
  // Filled in by the uploads feature.
};
