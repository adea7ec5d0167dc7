/**
 * Tools that need random access to a blob (sharp, ffprobe, file sniffing) get a local path: the
 * store's own file when it has one (fs), otherwise a private temporary copy under the store's spool
 * directory (object storage), removed once `fn` settles.
 */
import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BlobNotFound, type BlobStore } from './store.js';
import { streamToNewFile } from './new-file.js';

export interface LocalCopy {
  path: string;
  release(): Promise<void>;
}

/**
 * A local path for `key`; call `release()` when done (a no-op for stores with local files).
 * `inMemory`: the blob's bytes when the caller already holds them, written instead of read again.
 */
export async function openLocal(blobs: BlobStore, key: string, inMemory?: Buffer): Promise<LocalCopy> {
  if (blobs.localPath) {
    const file = blobs.localPath(key);
    await fsp.access(file).catch(() => {
      throw new BlobNotFound(key);
    });
    return { path: file, release: async () => undefined };
  }
  const dir = blobs.spoolDir ?? os.tmpdir();
  await fsp.mkdir(dir, { recursive: true });
  const tmp = path.join(dir, `blob-${crypto.randomBytes(8).toString('hex')}`);
  if (inMemory) {
    try {
      await fsp.writeFile(tmp, inMemory, { mode: 0o600 });
    } catch (err) {
      await fsp.rm(tmp, { force: true });
      throw err;
    }
  } else {
    await streamToNewFile(tmp, await blobs.get(key), [], { mode: 0o600 });
  }
  return { path: tmp, release: () => fsp.rm(tmp, { force: true }) };
}

export async function withLocalFile<T>(blobs: BlobStore, key: string, fn: (file: string) => Promise<T>): Promise<T> {
  const local = await openLocal(blobs, key);
  try {
    return await fn(local.path);
  } finally {
    await local.release();
  }
}

/** Removes spool copies left by a crash; only old ones, a sibling process may own the young ones. */
export async function sweepSpool(dir: string, olderThanMs: number): Promise<number> {
  const cutoff = Date.now() - olderThanMs;
  let removed = 0;
  for (const name of await fsp.readdir(dir).catch(() => [] as string[])) {
    const file = path.join(dir, name);
    const st = await fsp.stat(file).catch(() => null);
    if (st && st.mtimeMs < cutoff) {
      await fsp.rm(file, { force: true });
      removed++;
    }
  }
  return removed;
}
