/**
 * Runs a file through the image pipeline (media/plan.ts + media/render.ts). Shared by local and
 * remote copies with operations, and by group `nth` delivery when no processed-delivery extension
 * is registered.
 */
import type { AppContext } from '../context.js';
import { openLocal, type LocalCopy } from '../blobs/local-file.js';
import { AppError } from '../core/errors.js';
import type { FileRecord } from '../core/file-record.js';
import { parsePlan, type Plan } from '../media/plan.js';
import { render, type RenderResult, type RenderSource } from '../media/render.js';

export function planOf(ops: string[]): Plan {
  return parsePlan(ops);
}

export async function processFile(ctx: AppContext, file: FileRecord, plan: Plan, accept?: string): Promise<RenderResult> {
  if (!file.blobKey) throw new AppError(404, 'FileNotFound', 'File not found.');
  if (!file.isImage && !file.mimeType.startsWith('image/')) throw new AppError(400, 'NotAnImage', 'Not supported for files that are not images.');
  // Object storage has no local path: temporary local copies, released after the render.
  const temps: LocalCopy[] = [];
  const open = async (f: FileRecord): Promise<RenderSource> => {
    const local = await openLocal(ctx.blobs, f.blobKey as string);
    temps.push(local);
    return { path: local.path, mime: f.mimeType };
  };
  try {
    return await render(await open(file), plan, {
      fileId: file.uuid,
      accept,
      loadOverlay: async (uuid) => {
        const o = await ctx.files.repo.get(file.projectId, uuid);
        if (!o || o.removedUs !== null || !o.blobKey || !o.isImage) return null;
        return open(o);
      },
    });
  } finally {
    for (const t of temps) await t.release();
  }
}

/** File extension (with the dot) of a render result's format. */
export function extensionOf(result: RenderResult): string {
  const f = result.format.toLowerCase();
  return f === 'jpeg' ? '.jpg' : `.${f}`;
}
