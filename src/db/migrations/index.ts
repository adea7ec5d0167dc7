/**
 * Every migration in order. Append new entries (a file per migration); never edit a released one.
 * Column types are chosen to mean the same in SQLite and PostgreSQL.
 */
import type { MigrationStep } from './types.js';
import { core } from './0001_core.js';
import { tokenUsage } from './0002_token_usage.js';
import { groupsMigration } from './0003_groups.js';
import { uploadsMigration } from './0004_uploads.js';
import { webhooksMigration } from './0005_webhooks.js';
import { jobFairKey } from './0006_job_fair_key.js';

export const MIGRATIONS: ReadonlyArray<readonly [string, MigrationStep]> = [
  ['0001_core', core],
  ['0002_token_usage', tokenUsage],
  ['0003_groups', groupsMigration],
  ['0004_uploads', uploadsMigration],
  ['0005_webhooks', webhooksMigration],
  ['0006_job_fair_key', jobFairKey],
];
