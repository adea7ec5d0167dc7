/**
 * Runs a file through the image pipeline (media/plan.ts + media/render.ts). Shared by local and
 * remote copies with operations, and by group `nth` delivery when no processed-delivery extension
 * is registered.
 */
import type { AppContext } from '../context.js';
import { AppError } from '../core/errors.js';
import type { FileRecord } from '../core/file-record.js';
import { parsePlan, type Plan } from '../media/plan.js';
import { render, type RenderResult, type RenderSource } from '../media/render.js';

export function planOf(ops: string[]): Plan {
  return parsePlan(ops);
}

export async function processFile(ctx: AppContext, file: FileRecord, plan: Plan, accept?: string): Promise<RenderResult> {
  if (!file.blobKey || !ctx.blobs.localPath) throw new AppError(404, 'FileNotFound', 'File not found.');
  if (!file.isImage && !file.mimeType.startsWith('image/')) throw new AppError(400, 'NotAnImage', 'Not supported for files that are not images.');
  const source: RenderSource = { path: ctx.blobs.localPath(file.blobKey), mime: file.mimeType };
  return render(source, plan, {
    accept,
    loadOverlay: async (uuid) => {
      const o = await ctx.files.repo.get(file.projectId, uuid);
      if (!o || o.removedUs !== null || !o.blobKey || !o.isImage || !ctx.blobs.localPath) return null;
      return { path: ctx.blobs.localPath(o.blobKey), mime: o.mimeType };
    },
  });
}

/** File extension (with the dot) of a render result's format. */
export function extensionOf(result: RenderResult): string {
  const f = result.format.toLowerCase();
  return f === 'jpeg' ? '.jpg' : `.${f}`;
}
