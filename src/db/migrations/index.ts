/**
 * Every migration in order. Append new entries (a file per migration); never edit a released one.
 * Column types are chosen to mean the same in SQLite and PostgreSQL.
 */
import type { MigrationStep } from './types.js';
import { core } from './0001_core.js';
import { tokenUsage } from './0002_token_usage.js';

export const MIGRATIONS: ReadonlyArray<readonly [string, MigrationStep]> = [
  ['0001_core', core],
  ['0002_token_usage', tokenUsage],
];
