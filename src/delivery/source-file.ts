/**
 * A file's bytes for the image pipeline. An original small enough for the originals cache comes
 * with its bytes in memory (decoding then reads neither the disk nor the header twice); besides,
 * a local path: the blob store's own when it has one (fs), otherwise, only when the caller needs a
 * file (ffmpeg) or the bytes are not in memory, a temporary copy that is removed on release.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { AppContext } from '../context.js';
import type { FileRecord } from '../core/file-record.js';
import type { SourceMemo } from '../media/pipeline/source.js';
import { originalsFor } from './originals.js';

export interface LocalSource {
  path: string | null;
  bytes?: Buffer;
  memo?: SourceMemo;
  release(): Promise<void>;
}

const nothingToRelease = async (): Promise<void> => undefined;

export async function openSource(ctx: AppContext, file: FileRecord, opts: { needsPath: boolean }): Promise<LocalSource> {
  const key = file.blobKey as string;
  const original = await originalsFor(ctx).get(key, file.size);
  const inMemory = original ? { bytes: original.bytes, memo: original.memo } : {};
  if (ctx.blobs.localPath) return { path: ctx.blobs.localPath(key), ...inMemory, release: nothingToRelease };
  if (original && !opts.needsPath) return { path: null, ...inMemory, release: nothingToRelease };
  const tmp = path.join(os.tmpdir(), `stowage-src-${crypto.randomBytes(8).toString('hex')}`);
  try {
    await (original ? fsp.writeFile(tmp, original.bytes, { mode: 0o600 }) : pipeline(await ctx.blobs.get(key), fs.createWriteStream(tmp, { mode: 0o600 })));
  } catch (err) {
    await fsp.rm(tmp, { force: true });
    throw err;
  }
  return { path: tmp, ...inMemory, release: () => fsp.rm(tmp, { force: true }) };
}
