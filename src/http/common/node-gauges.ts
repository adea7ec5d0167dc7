/**
 * The node's scrape-time gauges that belong to no feature: the job queue (shared by every node of
 * a deployment, so every node reports the same value) and the data dir's free space (this node's).
 */
import type { Config } from '../../config.js';
import type { FeatureMetrics } from '../../context.js';
import type { JobQueue } from '../../jobs/queue.js';
import { freeBytes } from './disk-space.js';

export function nodeGauges(metrics: FeatureMetrics, config: Pick<Config, 'dataDir' | 'minFreeBytes'>, queue: Pick<JobQueue, 'stats'>): void {
  metrics.gauge('stowage_job_queue_lag_seconds', 'How long the oldest due job has waited to be claimed (0 when none waits)', async () => (await queue.stats()).lagMs / 1000);
  metrics.gauge('stowage_jobs_dead', 'Jobs that exhausted their attempts (kept until pruned)', async () => (await queue.stats()).dead);
  metrics.gauge('stowage_data_dir_free_bytes', 'Bytes free to the node in the file system of its data dir (CDN cache, staging, temporary copies)', () => freeBytes(config.dataDir));
  // Constant, exported so alert rules compare free space with the node's own readiness threshold.
  metrics.gauge('stowage_data_dir_min_free_bytes', 'STOWAGE_MIN_FREE_BYTES: below this much free space the node reports not ready', () => config.minFreeBytes);
}
