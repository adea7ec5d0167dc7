/**
 * Local-disk BlobStore for the embedded deployment. Writes go to a temp file in the same
 * directory tree, are fsynced, then renamed into place and the directory fsynced, so a crash never
 * leaves a partial blob under its final key. A `fresh` key (an upload's new uuid, which no row
 * names yet) is written in place instead, fsynced, and its directory fsynced: one file created
 * instead of two directory changes, and a crash mid-write leaves bytes no row names (swept).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { BatchedFileWriter } from '../writes/batched-file-writer.js';
import { pipeToNewFile } from './new-file.js';
import { HeadBytes } from './head.js';
import { WrittenBytesDigest } from '../digests/written-digest.js';
import { DirectorySyncs } from './dir-sync.js';
import { creationsSettled, makeDirDurably } from './durable-dirs.js';
import { BlobNotFound, type BlobEntry, type BlobStore, type ByteRange, type PutOptions, type PutResult } from './store.js';

const KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

export class FsBlobStore implements BlobStore {
  private readonly tmpDir: string;
  /** Uploads' temporary files and a render's scratch images share the one swept directory. */
  readonly spoolDir: string;
  /** Directory syncs, shared by the writes that wait for one at once, on descriptors kept open. */
  private readonly dirSyncs = new DirectorySyncs();

  constructor(private readonly root: string) {
    this.tmpDir = path.join(root, '.tmp');
    this.spoolDir = this.tmpDir;
    fs.mkdirSync(this.tmpDir, { recursive: true });
  }

  /** Maps a key to a path inside root; refuses anything that could escape it. */
  localPath(key: string): string {
    if (!KEY_PATTERN.test(key) || key.includes('..')) throw new Error(`invalid blob key: ${key}`);
    return path.join(this.root, key);
  }

  async put(key: string, source: Readable, opts: PutOptions): Promise<PutResult> {
    const final = this.localPath(key);
    const head = opts.keepHead ? new HeadBytes(opts.keepHead) : null;
    const fd = opts.fresh ? await createNew(final) : null;
    // A fresh file's directory entry exists from its open on: its directory is synced while the
    // body streams in (awaited below, before `put` answers), not after the file's own sync.
    const dirSynced = fd !== null ? this.dirSyncs.sync(path.dirname(final)) : null;
    dirSynced?.catch(() => undefined); // awaited below; until then a failure is not unhandled
    // A fresh key is written in place; any other beside it, then renamed over it.
    const file = fd !== null ? final : path.join(this.tmpDir, `${crypto.randomUUID()}.part`);
    // Batched writes, and the body's digests in the digest threads (digests/written-digest.ts) unless the
    // caller needs none now.
    const digest = opts.skipDigests ? null : new WrittenBytesDigest(file, opts.maxBytes);
    const writer = new BatchedFileWriter(file, {
      ...(fd !== null ? { fd } : { flags: 'wx' as const }),
      start: 0,
      maxBytes: opts.maxBytes,
      onTooLarge: opts.onTooLarge,
      onChunk: (chunk, size) => {
        digest?.received(chunk, size);
        head?.update(chunk);
      },
      onWritten: (end) => digest?.written(end),
      onAllWritten: (size) => digest?.allWritten(size),
    });
    let digests: { md5: string; sha256: string | null } = { md5: '', sha256: null };
    try {
      // The writer fsyncs before it finishes: the bytes are on disk before a rename (or a row) names them.
      await pipeToNewFile(file, [source], writer);
      if (digest) digests = await digest.digest(writer.size);
    } catch (err) {
      digest?.abandon();
      await dirSynced?.catch(() => undefined);
      await fsp.rm(file, { force: true });
      throw err;
    }
    if (fd === null) await this.renameIntoPlace(file, final);
    // The directory entry must be on disk too before anyone is told the bytes are durable.
    await (dirSynced ?? this.dirSyncs.sync(path.dirname(final)));
    return { size: writer.size, ...digests, ...(head ? { head: head.bytes() } : {}) };
  }

  /** A write that never shows partial bytes under `final`: the synced temporary file renamed over it. */
  private async renameIntoPlace(tmp: string, final: string): Promise<void> {
    try {
      // A full disk can fail the directory too: the temp file must not outlive the request then.
      await makeDirDurably(path.dirname(final));
      await fsp.rename(tmp, final);
    } catch (err) {
      await fsp.rm(tmp, { force: true });
      throw err;
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    const file = this.localPath(key);
    // A plain fd and fs.ReadStream: cheaper per request than a FileHandle stream (CDN hot path).
    const fd = await new Promise<number>((resolve, reject) =>
      fs.open(file, 'r', (err, handle) => (err ? reject(err.code === 'ENOENT' ? new BlobNotFound(key) : err) : resolve(handle))),
    );
    return fs.createReadStream(file, { fd, highWaterMark: 256 * 1024, ...(range ? { start: range.start, end: range.end } : {}) });
  }

  async move(from: string, to: string): Promise<void> {
    const source = this.localPath(from);
    const dest = this.localPath(to);
    await makeDirDurably(path.dirname(dest));
    try {
      await fsp.rename(source, dest);
    } catch (err) {
      throw (err as NodeJS.ErrnoException).code === 'ENOENT' ? new BlobNotFound(from) : err;
    }
    await this.dirSyncs.sync(path.dirname(dest));
    if (path.dirname(source) !== path.dirname(dest)) await this.dirSyncs.sync(path.dirname(source));
  }

  async size(key: string): Promise<number | null> {
    try {
      return (await fsp.stat(this.localPath(key))).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await fsp.rm(this.localPath(key), { force: true });
  }

  /** The node stops: the directories kept open for syncs are closed once their syncs are done. */
  close(): void {
    void this.dirSyncs.close();
  }

  /** Readiness: the blob directory is still there and writable. */
  async check(): Promise<void> {
    await fsp.access(this.tmpDir, fs.constants.W_OK);
  }

  /**
   * Removes temp files left by a crash mid-upload. Only old ones: another process sharing the
   * data dir may be writing the young ones right now (a write in progress keeps its mtime fresh).
   */
  async sweepTemp(olderThanMs: number): Promise<number> {
    const cutoff = Date.now() - olderThanMs;
    let removed = 0;
    for (const name of await fsp.readdir(this.tmpDir)) {
      const file = path.join(this.tmpDir, name);
      const st = await fsp.stat(file).catch(() => null);
      if (st && st.mtimeMs < cutoff) {
        await fsp.rm(file, { force: true });
        removed++;
      }
    }
    return removed;
  }

  /** Keys under `prefix` (a directory such as `files/`), depth first; temp files are not keys. */
  async *list(prefix: string): AsyncIterable<BlobEntry> {
    const start = path.join(this.root, prefix);
    if (path.relative(this.root, start).startsWith('..')) throw new Error(`invalid blob prefix: ${prefix}`);
    yield* walk(this.root, start);
  }
}

async function* walk(root: string, dir: string): AsyncIterable<BlobEntry> {
  const entries = await fsp.readdir(dir, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  for (const e of entries) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (full !== path.join(root, '.tmp')) yield* walk(root, full);
    } else if (e.isFile()) {
      const st = await fsp.stat(full).catch(() => null);
      if (st) yield { key: path.relative(root, full).split(path.sep).join('/'), modifiedMs: st.mtimeMs };
    }
  }
}

/**
 * Opens `file` for writing if it does not exist yet (its directory made on first use); null when
 * it exists. Exclusive, so a fresh write never truncates bytes something already relies on.
 */
async function createNew(file: string): Promise<number | null> {
  const open = () => new Promise<number>((resolve, reject) => fs.open(file, 'wx', (err, fd) => (err ? reject(err) : resolve(fd))));
  try {
    const fd = await open();
    // Its directory may be one another request has just made and not yet named durably.
    const made = creationsSettled();
    if (made) await made;
    return fd;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return null;
    if (code !== 'ENOENT') throw err;
  }
  await makeDirDurably(path.dirname(file));
  try {
    return await open();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return null;
    throw err;
  }
}
