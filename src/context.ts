/** Everything a surface needs, built once by app.ts and passed to each HTTP plugin. */
import type { ServerResponse } from 'node:http';
import type { Redis } from 'ioredis';
import type { Counter } from 'prom-client';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Db } from './db/connect.js';
import type { BlobStore } from './blobs/store.js';
import type { FileContract } from './file-contract.js';
import type { ProjectService } from './projects/service.js';
import type { JobQueue } from './jobs/queue.js';
import type { Worker } from './jobs/worker.js';
import type { UrlBases } from './core/file-json.js';

/**
 * `Files` is what `ctx.files` shows: the other features see the FileContract; app.ts, the
 * composition root and the files feature itself see the whole FileService (src/files/context.ts).
 */
export interface AppContext<Files extends FileContract = FileContract> {
  config: Config;
  /** Public base URLs (no trailing slash); fixed once the listeners are bound. */
  bases: UrlBases;
  log: Logger;
  db: Db;
  blobs: BlobStore;
  projects: ProjectService;
  files: Files;
  /** The node's Redis connection (net/redis.ts), or null when none is configured. */
  redis: Redis | null;
  queue: JobQueue;
  worker: Worker;
  /** The node's Prometheus registry: features add their counters and scrape-time gauges. */
  metrics: FeatureMetrics;
}

/** What features and surfaces use of the node's metrics (http/common/metrics.ts `NodeMetrics`). */
export interface FeatureMetrics {
  counter<L extends string = never>(name: string, help: string, labelNames?: readonly L[]): Counter<L>;
  /** A `_total` counter read at scrape time from a running total the caller keeps. */
  counterOf(name: string, help: string, read: () => number): void;
  gauge(name: string, help: string, read: () => number | Promise<number>): void;
  /** Names the route a response answered, for the request-duration series. */
  routeLabel(res: ServerResponse, pattern: string | undefined): void;
}
