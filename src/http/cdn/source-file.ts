/**
 * A file's bytes as a local path for sharp/ffmpeg: the blob store's own path when it has one (fs),
 * otherwise a temporary copy (object storage) that is removed on release.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { AppContext } from '../../context.js';
import type { FileRecord } from '../../core/file-record.js';

export interface LocalSource {
  path: string;
  release(): Promise<void>;
}

export async function openSource(ctx: AppContext, file: FileRecord): Promise<LocalSource> {
  const key = file.blobKey as string;
  if (ctx.blobs.localPath) return { path: ctx.blobs.localPath(key), release: async () => undefined };
  const tmp = path.join(os.tmpdir(), `stowage-src-${crypto.randomBytes(8).toString('hex')}`);
  try {
    await pipeline(await ctx.blobs.get(key), fs.createWriteStream(tmp, { mode: 0o600 }));
  } catch (err) {
    await fsp.rm(tmp, { force: true });
    throw err;
  }
  return { path: tmp, release: () => fsp.rm(tmp, { force: true }) };
}
