/**
 * Remote copy (POST /files/remote_copy/): the source's bytes, or the processed result, written to
 * a custom storage of the project under a key made from the pattern. An existing object is left
 * alone and reported with 200 (wire-reference §2.6).
 */
import path from 'node:path';
import { Readable } from 'node:stream';
import type { AppContext } from '../context.js';
import type { RenderStoredFile } from '../feature.js';
import { StorageService } from './storages/service.js';
import { StorageWriter } from './storages/s3.js';
import { effectsForKey, expandPattern, extensionOf, validatePattern } from './pattern.js';
import { checkCopySize, type CopySource } from './source.js';
import { restErrors } from '../core/error-catalogue/rest.js';

export interface RemoteCopyResult {
  url: string;
  created: boolean;
}

export async function remoteCopy(ctx: AppContext, projectId: number, src: CopySource, opts: { target: string; makePublic: boolean; pattern: string | null; render: RenderStoredFile }): Promise<RemoteCopyResult> {
  const storage = await new StorageService(ctx.db).byName(projectId, opts.target);
  if (!storage) throw restErrors.copyNoSuchStorage();
  const pattern = opts.pattern ?? storage.pattern;
  validatePattern(pattern);
  checkCopySize(ctx, src);
  const out = src.plan ? await opts.render(src.file, src.plan) : null;
  const ext = out ? extensionOf(out) : path.extname(src.file.filename);
  const stem = src.file.filename.slice(0, src.file.filename.length - path.extname(src.file.filename).length);
  const key = expandPattern(pattern, { uuid: src.file.uuid, filename: stem, effects: effectsForKey(src.plan ? src.ops : []), ext });
  const writer = await StorageWriter.open(storage, ctx.config.outboundAllow);
  try {
    const url = `s3://${storage.bucket}/${key}`;
    if (await writer.exists(key)) return { url, created: false };
    const body = out ? Readable.from([out.body]) : await ctx.blobs.get(src.file.blobKey as string);
    await writer.put(key, body, out ? out.contentType : src.file.mimeType, opts.makePublic);
    return { url, created: true };
  } finally {
    writer.close();
  }
}
