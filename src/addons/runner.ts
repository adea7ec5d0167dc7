/**
 * The durable run of one add-on execution (job `addon.execute`). Delivery is at least once (a
 * node killed mid-run hands the job to the next worker after its lease), so a run starts from the
 * execution row: a finished one is left alone, a file already made by an earlier run is reused,
 * and the appdata write and the final status commit together, exactly once.
 */
import { Readable } from 'node:stream';
import type { AppContext } from '../context.js';
import { withLocalFile } from '../blobs/local-file.js';
import { fileBlobKey, type FileRecord } from '../core/file-record.js';
import { nowUs } from '../core/time.js';
import { addonInitiator } from '../jobs/file-events.js';
import type { ClaimedJob } from '../jobs/queue.js';
import type { JobHandler } from '../jobs/worker.js';
import { findAddon } from './index.js';
import type { AddonRepo, ExecutionRow } from './repo.js';
import { ADDON_MAX_ATTEMPTS } from './service.js';
import { AddonError, type Addon, type AddonMadeFile } from './types.js';

export function addonJob(ctx: AppContext, repo: AddonRepo): JobHandler<'addon.execute'> {
  return {
    leaseMs: ctx.config.addonLeaseMs,
    concurrency: ctx.config.addonConcurrency,
    retryInMs: (attempt) => 1000 * 2 ** (attempt - 1),
    run: (payload, job) => runExecution(ctx, repo, payload.requestId, job),
  };
}

async function runExecution(ctx: AppContext, repo: AddonRepo, requestId: string, job: ClaimedJob): Promise<void> {
  const exec = await repo.get(requestId);
  if (!exec || exec.status !== 'in_progress') return;
  const fail = (message: string) => repo.finish(requestId, 'error', message.slice(0, 500), nowUs());
  const addon = findAddon(exec.addon);
  if (!addon) return void (await fail(`add-on ${exec.addon} is not available on this node`));
  const projectId = Number(exec.project_id);
  const file = await ctx.files.find(projectId, exec.target);
  if (!file || file.removedUs !== null || !file.blobKey) return void (await fail('the file was removed'));
  try {
    await runOnce(ctx, repo, addon, exec, file);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    ctx.log.warn({ addon: exec.addon, requestId, attempt: job.attempt, err: message }, 'add-on run failed');
    // A final answer: the add-on says retrying cannot help, or this was the last attempt.
    if (err instanceof AddonError || job.attempt >= Math.min(job.maxAttempts, ADDON_MAX_ATTEMPTS)) return void (await fail(message));
    throw err;
  }
}

async function runOnce(ctx: AppContext, repo: AddonRepo, addon: Addon, exec: ExecutionRow, file: FileRecord): Promise<void> {
  const params: unknown = JSON.parse(exec.params);
  const signal = AbortSignal.timeout(ctx.config.addonTimeoutMs);
  const out = await withLocalFile(ctx.blobs, file.blobKey!, (path) =>
    addon.run({ file, path, signal, config: ctx.config, log: ctx.log.child({ addon: addon.name, requestId: exec.request_id }) }, addon.parseParams(params)),
  );
  if (signal.aborted) throw new AddonError(`the add-on took longer than ${ctx.config.addonTimeoutMs} ms`);
  if (out.file) {
    if (!exec.result_file) throw new AddonError(`add-on ${addon.name} made a file but does not declare makesFile`);
    await storeMadeFile(ctx, exec, file, out.file);
  }
  const initiator = addonInitiator(exec.request_id, addon.name);
  await ctx.files.writeAddonResult(
    file.projectId,
    file.uuid,
    { name: addon.name, version: addon.version, data: out.data, initiator, infected: out.infected === true, remove: out.removeTarget === true },
    async (trx, written) => {
      await repo.finish(exec.request_id, written ? 'done' : 'error', written ? null : 'the file was removed', nowUs(), trx);
    },
  );
}

/** The made file under the uuid fixed at execute time; an earlier run's file is reused. */
async function storeMadeFile(ctx: AppContext, exec: ExecutionRow, source: FileRecord, made: AddonMadeFile): Promise<void> {
  const uuid = exec.result_file!;
  if (await ctx.files.find(source.projectId, uuid)) return;
  const project = await ctx.projects.byId(source.projectId);
  if (!project) throw new AddonError('the project no longer exists');
  const blobKey = fileBlobKey(uuid);
  const { size, md5, sha256 } = await ctx.blobs.put(blobKey, Readable.from([made.bytes]), {
    maxBytes: ctx.config.maxUploadBytes,
    onTooLarge: () => new AddonError('the result is larger than the upload limit'),
  });
  await ctx.files.commit(project, { uuid, blobKey, size, md5, sha256 }, {
    originalFilename: made.filename,
    declaredType: made.mimeType,
    store: 'auto',
    metadata: {},
    initiator: addonInitiator(exec.request_id, exec.addon, source.uuid),
  });
}
