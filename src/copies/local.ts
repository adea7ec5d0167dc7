/**
 * Local copy (POST /files/local_copy/): a new file in the same project holding the source's bytes,
 * or the processed result when the source names operations. The copy is complete when the 201 is
 * sent (is_ready true), which the spec allows ("can show size 0 … until the copy completes").
 */
import path from 'node:path';
import { Readable } from 'node:stream';
import type { AppContext } from '../context.js';
import type { RenderStoredFile } from '../feature.js';
import type { FileRecord } from '../core/file-record.js';
import type { Initiator } from '../jobs/file-events.js';
import type { ProjectRow } from '../projects/service.js';
import { extensionOf } from './pattern.js';
import { checkCopySize, type CopySource } from './source.js';
import { restErrors } from '../core/error-catalogue/rest.js';

export async function localCopy(ctx: AppContext, project: ProjectRow, src: CopySource, opts: { store: boolean; metadata: Record<string, string>; initiator: Initiator; render: RenderStoredFile }): Promise<FileRecord> {
  checkCopySize(ctx, src);
  const tooLarge = restErrors.copyTooLarge;
  const common = { store: opts.store, metadata: opts.metadata, initiator: opts.initiator, maxBytes: ctx.config.copyMaxBytes, onTooLarge: tooLarge };
  if (!src.plan) {
    // Streamed blob to blob: memory stays flat whatever the size.
    const body = await ctx.blobs.get(src.file.blobKey as string);
    return ctx.files.ingest(project, body, { ...common, originalFilename: src.file.originalFilename, declaredType: src.file.declaredType });
  }
  const out = await opts.render(src.file, src.plan);
  return ctx.files.ingest(project, Readable.from([out.body]), { ...common, originalFilename: renamed(src.file.originalFilename, extensionOf(out)), declaredType: out.contentType });
}

/** `photo.png` + `.jpg` -> `photo.jpg`: the copy's name follows the format it now has. */
export function renamed(original: string, ext: string): string {
  const current = path.extname(original);
  return original.slice(0, original.length - current.length) + ext;
}
