/**
 * A file's bytes as a local path for sharp/ffmpeg: the blob store's own path when it has one (fs),
 * otherwise a temporary copy (object storage) that is removed on release. With a local path, an
 * original small enough for the originals cache also comes with its bytes in memory, so decoding
 * reads neither the disk nor the header twice.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { AppContext } from '../../context.js';
import type { FileRecord } from '../../core/file-record.js';
import type { SourceMemo } from '../../media/operations/source.js';
import { originalsFor } from './originals.js';

export interface LocalSource {
  path: string;
  bytes?: Buffer;
  memo?: SourceMemo;
  release(): Promise<void>;
}

const nothingToRelease = async (): Promise<void> => undefined;

export async function openSource(ctx: AppContext, file: FileRecord): Promise<LocalSource> {
  const key = file.blobKey as string;
  if (ctx.blobs.localPath) {
    const path = ctx.blobs.localPath(key);
    const original = await originalsFor(ctx).get(key, file.size);
    return original ? { path, bytes: original.bytes, memo: original.memo, release: nothingToRelease } : { path, release: nothingToRelease };
  }
  const tmp = path.join(os.tmpdir(), `stowage-src-${crypto.randomBytes(8).toString('hex')}`);
  try {
    await pipeline(await ctx.blobs.get(key), fs.createWriteStream(tmp, { mode: 0o600 }));
  } catch (err) {
    await fsp.rm(tmp, { force: true });
    throw err;
  }
  return { path: tmp, release: () => fsp.rm(tmp, { force: true }) };
}
