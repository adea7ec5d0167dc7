/**
 * The `source` of a copy (wire-reference §2.6): a uuid, `uuid/-/ops/` or a CDN URL with operations.
 * Resolved to a live file of the project plus a parsed plan (null when no operation changes bytes).
 */
import type { AppContext } from '../context.js';
import { parseBoolean, REST_API_BOOLEANS } from '../core/booleans.js';
import type { FileRecord } from '../core/file-record.js';
import { parseFileRef } from '../http/cdn/file-ref.js';
import type { Plan } from '../media/plan.js';
import { restErrors } from '../core/error-catalogue/rest.js';
import { restFieldErrors } from '../core/error-catalogue/rest-fields.js';

export interface CopySource {
  file: FileRecord;
  /** Operation segments (decoded), empty when none. */
  ops: string[];
  /** null when the operations do not touch the bytes (none, or only inline / @-tags). */
  plan: Plan | null;
}


export async function resolveSource(ctx: AppContext, projectId: number, raw: unknown): Promise<CopySource> {
  if (raw === undefined || raw === null || raw === '') throw restFieldErrors.sourceRequired();
  if (typeof raw !== 'string') throw restFieldErrors.sourceInvalid();
  const ref = parseFileRef(raw);
  if (!ref) throw restFieldErrors.sourceInvalid();
  const file = await ctx.files.find(projectId, ref.uuid);
  // A removed source is refused like an unknown one (spec: the source MUST NOT be deleted).
  if (!file || file.removedUs !== null || !file.blobKey) throw restFieldErrors.sourceInvalid();
  if (!file.isReady) throw restFieldErrors.sourceNotReady();
  if (ref.plan.info) throw restFieldErrors.sourceInvalid();
  return { file, ops: ref.written.map((s) => decodeURIComponent(s)), plan: ref.plan.isProcessing ? ref.plan : null };
}

/** The spec's size limits: 100 MB with operations, 5 GB without (both configurable). */
export function checkCopySize(ctx: AppContext, src: CopySource): void {
  const max = src.plan ? ctx.config.copyProcessedMaxBytes : ctx.config.copyMaxBytes;
  if (src.file.size > max) throw restErrors.copyTooLarge();
}

/** `true`/`false` as JSON booleans or strings (JS and py send booleans, the docs strings). */
export function boolField(value: unknown, name: string, def: boolean): boolean {
  if (value === undefined || value === null) return def;
  const b = parseBoolean(value, REST_API_BOOLEANS);
  if (b !== undefined) return b;
  throw restFieldErrors.paramNotTrueOrFalse(name);
}
