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
import { addonsMigration } from './0007_addons.js';
import { signedCdn } from './0008_signed_cdn.js';
import { conversionsMigration } from './0009_conversions.js';
import { fileTags } from './0010_file_tags.js';
import { fileSearch } from './0011_file_search.js';
import { searchTextIndex } from './0012_search_text_index.js';
import { fileContents } from './0013_file_contents.js';
import { tusMigration } from './0015_tus.js';
import { dashboardSessions } from './0016_dashboard_sessions.js';
import { fileLabels } from './0017_file_labels.js';
import { projectCounters } from './0018_project_counters.js';
import { jobClaimIndexes } from './0020_job_claim_indexes.js';
import { fairClaimFunction } from './0021_fair_claim_function.js';
import { searchTextDeferred } from './0022_search_text_deferred.js';
import { uploadIndexes } from './0023_upload_indexes.js';
import { fairClaimPlan } from './0024_fair_claim_plan.js';
import { tusClient } from './0025_tus_client.js';
import { objectKeys } from './0026_object_keys.js';
import { fileRestore } from './0027_file_restore.js';
import { s3PartPlaces } from './0028_s3_part_places.js';
import { sizeIndex } from './0029_size_index.js';
import { fairClaimSteps } from './0030_fair_claim_steps.js';

export const MIGRATIONS: ReadonlyArray<readonly [string, MigrationStep]> = [
  ['0001_core', core],
  ['0002_token_usage', tokenUsage],
  ['0003_groups', groupsMigration],
  ['0004_uploads', uploadsMigration],
  ['0005_webhooks', webhooksMigration],
  ['0006_job_fair_key', jobFairKey],
  ['0007_addons', addonsMigration],
  ['0008_signed_cdn', signedCdn],
  ['0009_conversions', conversionsMigration],
  ['0010_file_tags', fileTags],
  ['0011_file_search', fileSearch],
  ['0012_search_text_index', searchTextIndex],
  ['0013_file_contents', fileContents],
  ['0015_tus', tusMigration],
  ['0016_dashboard_sessions', dashboardSessions],
  ['0017_file_labels', fileLabels],
  ['0018_project_counters', projectCounters],
  ['0020_job_claim_indexes', jobClaimIndexes],
  ['0021_fair_claim_function', fairClaimFunction],
  ['0022_search_text_deferred', searchTextDeferred],
  ['0023_upload_indexes', uploadIndexes],
  ['0024_fair_claim_plan', fairClaimPlan],
  ['0025_tus_client', tusClient],
  ['0026_object_keys', objectKeys],
  ['0027_file_restore', fileRestore],
  ['0028_s3_part_places', s3PartPlaces],
  ['0029_size_index', sizeIndex],
  ['0030_fair_claim_steps', fairClaimSteps],
];
