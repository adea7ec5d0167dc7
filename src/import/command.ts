/**
 * The body of `stowage import` (src/cli/import.ts parses the options): opens the stores, copies the
 * source project into the local one with a progress line, prints the summary.
 */
import { openBlobStore } from '../blobs/select.js';
import type { Config } from '../config.js';
import { FileRestorer } from '../files/restore.js';
import { FileService } from '../files/service.js';
import { GroupService } from '../groups/service.js';
import { createLogger, openStores } from '../stores.js';
import { newCounters } from './counters.js';
import { showProgress, summary } from './progress.js';
import type { RetryPolicy } from './retry.js';
import { runImport } from './run.js';
import { SourceClient } from './source-client.js';

export interface ImportRequest {
  /** Public key of the local project to import into. */
  project: string;
  source: { restBase: string; pubKey: string; secretKey: string };
  cdnBase: string | null;
  concurrency: number;
  retry: RetryPolicy;
  /** How often a progress line is written when stderr is not a terminal. */
  intervalMs: number;
}

export async function importProject(config: Config, req: ImportRequest): Promise<void> {
  const { db, projects } = await openStores(config, createLogger(config));
  const blobs = await openBlobStore(config);
  const counters = newCounters();
  const source = new SourceClient({ ...req.source, retry: req.retry, onRetry: () => counters.retries++ });
  try {
    const project = await projects.require(req.project);
    const files = new FileService(db, blobs);
    const target = { project, files: new FileRestorer(db, files), groups: new GroupService({ db, files }), maxBytes: config.maxUploadBytes };
    const stop = showProgress(counters, process.stderr, { tty: process.stderr.isTTY === true, intervalMs: req.intervalMs });
    try {
      await runImport(source, target, { concurrency: req.concurrency, retry: req.retry, cdnBase: req.cdnBase }, counters);
    } finally {
      stop();
    }
    process.stdout.write(summary(counters));
    if (counters.failures.length > 0) process.exitCode = 1;
  } finally {
    await source.close();
    blobs.close?.();
    await db.close();
  }
}
