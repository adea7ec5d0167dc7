/**
 * Leftovers of crashes: bytes that no row will ever reference. An upload makes its bytes durable
 * before it commits the row (invariant 1), so a node killed in between leaves a blob without a row,
 * and one killed mid-write leaves a temporary file. Neither is ever read again.
 *
 * Orphans are found by age, not by a journal: a key older than `minAgeMs` (longer than the longest
 * upload can take between writing its bytes and committing its row) that no owner references is
 * removed. Owners are the features that write under a key prefix (files/, multipart/); a prefix
 * nobody owns (cache/ in a shared bucket) is never touched, and neither is a key an owner cannot
 * parse. One node runs this per period (a periodic job); temporary files are per node (sweepTemp).
 */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { PeriodicSchedule } from '../jobs/periodic.js';
import type { JobHandlers } from '../jobs/worker.js';
import type { BlobEntry, BlobStore } from './store.js';

/** A feature's claim on the keys it writes under `prefix`. */
export interface BlobKeyOwner {
  /** Key prefix, ending in `/` (e.g. `files/`). */
  prefix: string;
  /** Of `keys` (all under `prefix`), the ones a row still references or that this owner cannot judge. */
  referenced(keys: string[]): Promise<Set<string>>;
}

const BATCH = 500;

export interface LeftoverSweeps {
  jobs: JobHandlers;
  schedules: PeriodicSchedule[];
  /** Stops this node's temporary-file sweeps. */
  stop(): void;
}

/**
 * Orphan blobs are shared (one bucket or data dir), so one node per period reconciles them: a
 * periodic job. Temporary files live in each node's own data dir, so every node sweeps its own
 * on the same period.
 */
export function leftoverSweeps(blobs: BlobStore, owners: BlobKeyOwner[], config: Pick<Config, 'leftoversMinAgeMs' | 'leftoversSweepMs'>, log: Logger): LeftoverSweeps {
  const sweepTemp = () =>
    blobs.sweepTemp?.(config.leftoversMinAgeMs).then(
      (n) => void (n > 0 && log.info({ removed: n }, 'removed temporary files left by a crash')),
      (err: unknown) => log.warn({ err }, 'temporary file sweep failed'),
    );
  const timer = setInterval(sweepTemp, config.leftoversSweepMs);
  timer.unref();
  return {
    jobs: { 'blobs.sweep-leftovers': { leaseMs: 10 * 60 * 1000, run: async () => void (await sweepOrphanBlobs(blobs, owners, config.leftoversMinAgeMs, log)) } },
    schedules: [{ kind: 'blobs.sweep-leftovers', periodMs: config.leftoversSweepMs }],
    stop: () => clearInterval(timer),
  };
}

/** Removes unreferenced keys older than `minAgeMs` under every owned prefix; returns how many. */
export async function sweepOrphanBlobs(blobs: BlobStore, owners: BlobKeyOwner[], minAgeMs: number, log: Logger): Promise<number> {
  if (!blobs.list) return 0;
  const cutoff = Date.now() - minAgeMs;
  let removed = 0;
  for (const prefix of new Set(owners.map((o) => o.prefix))) {
    const judges = owners.filter((o) => o.prefix === prefix);
    let batch: BlobEntry[] = [];
    for await (const entry of blobs.list(prefix)) {
      if (entry.modifiedMs >= cutoff) continue;
      batch.push(entry);
      if (batch.length >= BATCH) {
        removed += await removeUnreferenced(blobs, judges, batch);
        batch = [];
      }
    }
    if (batch.length > 0) removed += await removeUnreferenced(blobs, judges, batch);
  }
  if (removed > 0) log.info({ removed }, 'removed blobs no row references (left by a crash)');
  return removed;
}

async function removeUnreferenced(blobs: BlobStore, owners: BlobKeyOwner[], batch: BlobEntry[]): Promise<number> {
  const keys = batch.map((e) => e.key);
  const kept = new Set<string>();
  for (const owner of owners) for (const k of await owner.referenced(keys)) kept.add(k);
  const orphans = keys.filter((k) => !kept.has(k));
  for (const key of orphans) await blobs.delete(key);
  return orphans.length;
}

/** The uuid a key such as `files/ab/<uuid>` or `multipart/ab/<uuid>/3` names, or null. */
export function uuidInKey(key: string, prefix: string): string | null {
  const m = /^[0-9a-f]{2}\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(\/|$)/.exec(key.slice(prefix.length));
  return m ? (m[1] as string) : null;
}
