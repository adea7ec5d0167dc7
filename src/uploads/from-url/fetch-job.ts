/**
 * The durable from_url fetch: downloads through the one OutboundClient (SSRF guard, redirect
 * re-checks, size and time caps) straight into the blob store, persisting progress as it goes,
 * then commits the file. The worker's fenced heartbeat renews the job's lease while it runs, so a
 * short lease is safe and a node killed mid-download hands the fetch to the next worker soon after.
 */
import { Readable } from 'node:stream';
import type { AppContext } from '../../context.js';
import { digestsLaterFor } from '../../digests/digest.js';
import { isAppError } from '../../core/errors.js';
import { apiInitiator } from '../../jobs/file-events.js';
import { fileBlobKey } from '../../core/file-record.js';
import type { ClaimedJob } from '../../jobs/queue.js';
import type { JobHandler } from '../../jobs/worker.js';
import { downloadErrors } from '../../core/error-catalogue/download.js';
import type { OutboundClient, OutboundResponse } from '../../net/outbound.js';
import type { FromUrlTasks } from './tasks.js';
import { filenameFor } from './filename.js';
import { insufficientStorage, isOutOfSpace } from '../../http/common/disk-space.js';

const PROGRESS_EVERY_MS = 500;

export function fetchJob(ctx: AppContext, tasks: FromUrlTasks, client: OutboundClient): JobHandler<'from_url.fetch'> {
  return {
    leaseMs: ctx.config.fromUrlLeaseMs,
    retryInMs: (attempt) => Math.min(60_000, 1000 * 2 ** attempt),
    run: (payload, job) => runFetch(ctx, tasks, client, payload.token, job),
  };
}

async function runFetch(ctx: AppContext, tasks: FromUrlTasks, client: OutboundClient, token: string, job: ClaimedJob): Promise<void> {
  const task = await tasks.get(token);
  if (!task || task.status === 'success' || task.status === 'error') return;
  const opts = tasks.options(task);
  // A previous run committed the file but died before recording it: just record it.
  const existing = await ctx.files.find(Number(task.project_id), opts.fileUuid);
  if (existing) return tasks.succeed(token, existing.uuid);
  const found = await ctx.projects.lookup(opts.pubKey);
  if (!found) return tasks.fail(token, 'DownloadFileValidationFailedError', 'The project no longer exists.');

  const maxBytes = ctx.config.maxUploadBytes;
  try {
    // The task stays `waiting` until the origin answers: only then is its size known (or known to
    // be unknown), and `progress` always carries the real total (SDK tests poll for this order).
    const res = await client.download(task.source_url, { maxBytes, timeoutMs: ctx.config.fromUrlTimeoutMs });
    await tasks.progress(token, 0, res.contentLength);
    const blobKey = fileBlobKey(opts.fileUuid);
    const put = await ctx.blobs.put(blobKey, counted(res, (done) => tasks.progress(token, done, res.contentLength)), {
      maxBytes,
      onTooLarge: () => downloadErrors.tooBig(maxBytes + 1, maxBytes),
      // A large download's digests come from a job after `success` (files/digest-later.ts).
      skipDigests: digestsLaterFor(ctx.config.digestLaterBytes, res.contentLength ?? NaN),
    });
    await tasks.progress(token, put.size, put.size);
    const file = await ctx.files.commit(found.project, { uuid: opts.fileUuid, blobKey, size: put.size, md5: put.md5, sha256: put.sha256 }, {
      originalFilename: opts.filename ?? filenameFor(res),
      declaredType: res.headers['content-type'] ?? null,
      store: opts.store,
      metadata: opts.metadata,
      tags: opts.tags ?? [],
      initiator: apiInitiator(opts.requestId),
      sourceUrl: opts.saveDuplicates ? task.source_url : null,
    });
    await tasks.succeed(token, file.uuid);
  } catch (err) {
    // The URL or the remote side is at fault: a final answer for the client, no retry.
    if (isAppError(err) && err.status < 500 && !err.code.startsWith('DownloadFileHTTPNetwork')) return tasks.fail(token, err.code, err.message);
    if (job.attempt >= job.maxAttempts) {
      const e = isAppError(err) ? err : isOutOfSpace(err) ? insufficientStorage(ctx.log, err, {}) : null;
      return tasks.fail(token, e?.code ?? 'DownloadFileInternalServerError', e?.message ?? 'Internal server error.');
    }
    throw err; // network trouble or our own failure: the queue retries with backoff
  }
}

/** The body as a stream (errors propagate), reporting bytes read at most every PROGRESS_EVERY_MS. */
function counted(res: OutboundResponse, report: (done: number) => Promise<void>): Readable {
  async function* gen(): AsyncGenerator<Uint8Array> {
    let done = 0;
    let last = 0;
    for await (const chunk of res.body) {
      done += chunk.length;
      const now = Date.now();
      if (now - last >= PROGRESS_EVERY_MS) {
        last = now;
        // Progress is advisory: a failed write must not fail the download.
        report(done).catch(() => undefined);
      }
      yield chunk;
    }
  }
  return Readable.from(gen(), { objectMode: false });
}
