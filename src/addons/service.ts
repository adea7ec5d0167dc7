/**
 * Add-on executions: accept a request (checks, a row and its job in one transaction), answer its
 * status, and enqueue the project's chosen add-ons for each new file. The run itself is runner.ts.
 */
import { z } from 'zod';
import type { AppContext } from '../context.js';
import type { DbOrTrx } from '../db/connect.js';
import { isUniqueViolation } from '../db/errors.js';
import type { FileRecord } from '../core/file-record.js';
import { newUuid, parseUuid } from '../core/ids.js';
import { nowUs } from '../core/time.js';
import type { Initiator } from '../jobs/file-events.js';
import { enqueue } from '../jobs/queue.js';
import { findAddon } from './index.js';
import { AddonRepo } from './repo.js';
import type { Addon } from './types.js';
import { restErrors } from '../core/error-catalogue/rest.js';
import { imageErrors } from '../core/error-catalogue/media.js';

export const ADDON_JOB = 'addon.execute';
/** Attempts of one execution (a crash mid-run counts one): transient trouble is retried, then `error`. */
export const ADDON_MAX_ATTEMPTS = 3;

/** GET /addons/{name}/execute/status/: the execution's state, its result file once done, its error once failed. */
export const addonStatusSchema = z.object({ status: z.enum(['in_progress', 'done', 'error', 'unknown']), result: z.object({ file_id: z.string() }).optional(), error: z.string().optional() });
export type StatusJson = z.output<typeof addonStatusSchema>;

/** An execute call's body as `executeBody` parsed it. */
export interface ExecuteRequest {
  target: string;
  rawParams: unknown;
}

export const addonNotFound = restErrors.notFound;
const fileNotFound = restErrors.notFound;

export class AddonService {
  readonly repo: AddonRepo;

  constructor(private readonly ctx: AppContext) {
    this.repo = new AddonRepo(ctx.db);
  }

  addon(name: string): Addon {
    const addon = findAddon(name);
    if (!addon) throw addonNotFound();
    return addon;
  }

  /**
   * POST /addons/{name}/execute/, its body checked by the route (`executeBody`): `target` is a
   * canonical UUID and `params` passed the add-on's own checks; they are stored as sent and parsed
   * again by the run.
   */
  async execute(projectId: number, addon: Addon, request: ExecuteRequest): Promise<string> {
    const { target: uuid, rawParams } = request;
    const file = await this.ctx.files.find(projectId, uuid);
    if (!file || file.removedUs !== null) throw fileNotFound();
    refuseUnfit(addon, file);
    const requestId = newUuid();
    try {
      await this.ctx.db.transaction((trx) => this.start(trx, addon, file, rawParams ?? {}, requestId));
    } catch (err) {
      if (isUniqueViolation(err)) throw restErrors.concurrentCall();
      throw err;
    }
    return requestId;
  }

  private async start(trx: DbOrTrx, addon: Addon, file: FileRecord, rawParams: unknown, requestId: string): Promise<void> {
    const resultFile = addonMakesFile(addon) ? newUuid() : null;
    await this.repo.insert(trx, { requestId, projectId: file.projectId, addon: addon.name, target: file.uuid, params: rawParams, resultFile, nowUs: nowUs() });
    await enqueue(trx, { kind: ADDON_JOB, payload: { requestId }, maxAttempts: ADDON_MAX_ATTEMPTS });
  }

  /** GET /addons/{name}/execute/status/?request_id= */
  async status(projectId: number, name: string, requestId: string): Promise<StatusJson> {
    this.addon(name);
    const row = parseUuid(requestId) ? await this.repo.get(requestId.trim().toLowerCase()) : undefined;
    if (!row || Number(row.project_id) !== projectId || row.addon !== name) return { status: 'unknown' };
    const out: StatusJson = { status: row.status };
    if (row.status === 'done' && row.result_file) out.result = { file_id: row.result_file };
    if (row.status === 'error' && row.error) out.error = row.error;
    return out;
  }

  /**
   * Upload hook (inside the new file's transaction): the project's add-ons to run on upload, each
   * as an execution of its own. Files made by an add-on are not scanned by add-ons again (remove_bg
   * on its own output would never end). Add-ons the file does not fit are skipped.
   */
  async onUpload(trx: DbOrTrx, file: FileRecord, initiator: Initiator): Promise<void> {
    if (initiator.type === 'addon') return;
    const names = await this.repo.onUpload(file.projectId, trx);
    for (const name of names) {
      const addon = findAddon(name);
      if (!addon || (addon.accepts === 'image' && !file.isImage)) continue;
      await this.start(trx, addon, file, {}, newUuid());
    }
  }
}

/** Add-ons whose `run` returns a file get its uuid fixed up front (see AddonExecutionsTable.result_file). */
function addonMakesFile(addon: Addon): boolean {
  return addon.makesFile === true;
}

/** The spec's refusal of image add-ons on other files (the CDN's wording for the same case). */
export function refuseUnfit(addon: Addon, file: FileRecord): void {
  if (addon.accepts === 'image' && !file.isImage) throw imageErrors.notAnImage();
}
