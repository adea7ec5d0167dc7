/**
 * Processed results, cached on disk under <dataDir>/cache/<k0k1>/<key> with a small in-memory LRU
 * in front for small bodies (a memory hit costs no syscall). Files are written to cache/tmp and
 * renamed into place, so a reader never sees a partial result. The disk part is bounded by
 * `maxBytes` and evicts least recently used entries; the index is rebuilt from the directory at
 * start (ordered by access time) and only tracks what this process knows, while a miss in the
 * index still tries the file, so nodes sharing a data dir reuse each other's results.
 *
 * File layout: 4-byte big-endian length N, N bytes of JSON meta, then the body.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Plan } from '../media/plan.js';

export interface ResultMeta {
  contentType: string;
  width: number;
  height: number;
  format: string;
  varyAccept: boolean;
}

export type CacheHit =
  | { kind: 'memory'; meta: ResultMeta; body: Buffer }
  | { kind: 'file'; meta: ResultMeta; path: string; offset: number; length: number };

/** Bodies up to this size are read whole from disk and promoted to memory. */
const SMALL_BODY = 256 * 1024;

/**
 * A rendition's identity, the one place it is made: the file, the plan's canonical form (the
 * operations that decide the bytes) and the negotiated output format. The same key names the
 * cache entry (here and in shared results) and gives the ETag.
 */
export function renditionKey(uuid: string, plan: Plan, negotiated: string): RenditionKey {
  const input = `v1\n${uuid}\n${plan.canonical}\n${negotiated}`;
  const known = renditionKeys.get(input);
  if (known) return known;
  const key = crypto.createHash('sha256').update(input).digest('hex');
  const made = Object.freeze({ key, etag: `"${key.slice(0, 40)}"` });
  if (renditionKeys.size >= RENDITION_KEYS_MAX) renditionKeys.clear();
  renditionKeys.set(input, made);
  return made;
}

export interface RenditionKey { readonly key: string; readonly etag: string }

/** Keys of recent renditions by their input: a repeated URL (the cached case) hashes nothing. */
const renditionKeys = new Map<string, RenditionKey>();
const RENDITION_KEYS_MAX = 4096;

type MemoryHit = Extract<CacheHit, { kind: 'memory' }>;

export class ResultCache {
  /** Entries kept as the hits they answer: a memory hit hands out the entry itself, frozen. */
  private readonly memory = new Map<string, Readonly<MemoryHit>>();
  private memoryBytes = 0;
  /** key -> size on disk, in LRU order (oldest first). */
  private readonly disk = new Map<string, number>();
  private diskBytes = 0;
  private readonly tmpDir: string;
  private readonly memoryItemMax: number;

  constructor(private readonly dir: string, private readonly maxBytes: number, private readonly memoryMax: number, private readonly log: Logger) {
    this.tmpDir = path.join(dir, 'tmp');
    this.memoryItemMax = Math.min(SMALL_BODY * 4, Math.floor(memoryMax / 8));
  }

  /** Creates the directories, clears leftovers of interrupted writes and indexes what is there. */
  async init(): Promise<void> {
    if (this.maxBytes === 0) return;
    await fsp.rm(this.tmpDir, { recursive: true, force: true });
    await fsp.mkdir(this.tmpDir, { recursive: true });
    const found: Array<{ key: string; size: number; atime: number }> = [];
    for (const sub of await fsp.readdir(this.dir)) {
      if (!/^[0-9a-f]{2}$/.test(sub)) continue;
      for (const name of await fsp.readdir(path.join(this.dir, sub)).catch(() => [] as string[])) {
        const st = await fsp.stat(path.join(this.dir, sub, name)).catch(() => null);
        if (st?.isFile()) found.push({ key: name, size: st.size, atime: st.atimeMs });
      }
    }
    found.sort((a, b) => a.atime - b.atime);
    for (const f of found) this.track(f.key, f.size);
    await this.evict();
  }

  private file(key: string): string {
    return path.join(this.dir, key.slice(0, 2), key);
  }

  private track(key: string, size: number): void {
    const old = this.disk.get(key);
    if (old !== undefined) {
      this.disk.delete(key);
      this.diskBytes -= old;
    }
    this.disk.set(key, size);
    this.diskBytes += size;
  }

  /**
   * The entry when it is in memory, without a promise (the cached transform's path); null when
   * only `get` can tell (on disk, or not cached).
   */
  inMemory(key: string): Readonly<MemoryHit> | null {
    const mem = this.memory.get(key);
    if (mem === undefined) return null;
    this.memory.delete(key);
    this.memory.set(key, mem);
    return mem;
  }

  async get(key: string): Promise<CacheHit | null> {
    const mem = this.inMemory(key);
    if (mem) return mem;
    if (this.maxBytes === 0) return null;
    const file = this.file(key);
    let fh: fsp.FileHandle;
    try {
      fh = await fsp.open(file, 'r');
    } catch {
      return null;
    }
    try {
      const size = (await fh.stat()).size;
      const whole = size <= SMALL_BODY + 4096;
      const head = Buffer.alloc(whole ? size : 4096);
      const { bytesRead } = await fh.read(head, 0, head.length, 0);
      const metaLen = bytesRead >= 4 ? head.readUInt32BE(0) : -1;
      if (metaLen < 2 || 4 + metaLen > bytesRead) throw new Error('truncated cache entry');
      const meta = JSON.parse(head.toString('utf8', 4, 4 + metaLen)) as ResultMeta;
      this.track(key, size);
      // Access time drives eviction after a restart; relatime would not update it on read.
      const now = new Date();
      void fh.utimes(now, now).catch(() => undefined);
      if (whole) {
        const body = Buffer.from(head.subarray(4 + metaLen, bytesRead));
        this.remember(key, meta, body);
        return { kind: 'memory', meta, body };
      }
      return { kind: 'file', meta, path: file, offset: 4 + metaLen, length: size - 4 - metaLen };
    } catch (err) {
      this.log.warn({ err, key }, 'dropping unreadable CDN cache entry');
      await fsp.rm(file, { force: true });
      return null;
    } finally {
      await fh.close();
    }
  }

  /** Makes the result visible in memory at once and on disk once written. */
  put(key: string, meta: ResultMeta, body: Buffer): Promise<void> {
    this.remember(key, meta, body);
    if (this.maxBytes === 0) return Promise.resolve();
    return this.write(key, meta, body).catch((err: unknown) => this.log.warn({ err, key }, 'CDN cache write failed'));
  }

  private remember(key: string, meta: ResultMeta, body: Buffer): void {
    if (body.length > this.memoryItemMax) return;
    const old = this.memory.get(key);
    if (old) {
      this.memory.delete(key);
      this.memoryBytes -= old.body.length;
    }
    this.memory.set(key, Object.freeze({ kind: 'memory', meta, body: ownCopy(body) }));
    this.memoryBytes += body.length;
    for (const [k, v] of this.memory) {
      if (this.memoryBytes <= this.memoryMax) break;
      this.memory.delete(k);
      this.memoryBytes -= v.body.length;
    }
  }

  private async write(key: string, meta: ResultMeta, body: Buffer): Promise<void> {
    const metaBuf = Buffer.from(JSON.stringify(meta));
    const len = Buffer.alloc(4);
    len.writeUInt32BE(metaBuf.length);
    const size = 4 + metaBuf.length + body.length;
    if (size > this.maxBytes) return;
    const tmp = path.join(this.tmpDir, `${key}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`);
    const final = this.file(key);
    try {
      await fsp.writeFile(tmp, Buffer.concat([len, metaBuf, body]));
      await fsp.mkdir(path.dirname(final), { recursive: true });
      await fsp.rename(tmp, final);
    } catch (err) {
      await fsp.rm(tmp, { force: true });
      throw err;
    }
    this.track(key, size);
    await this.evict();
  }

  private async evict(): Promise<void> {
    for (const [key, size] of this.disk) {
      if (this.diskBytes <= this.maxBytes) break;
      this.disk.delete(key);
      this.diskBytes -= size;
      this.memory.delete(key);
      await fsp.rm(this.file(key), { force: true });
    }
  }

  /** For cached bodies too large for memory: a stream of `length` bytes from `offset`. */
  static stream(hit: Extract<CacheHit, { kind: 'file' }>, start = 0, end = hit.length - 1): fs.ReadStream {
    return fs.createReadStream(hit.path, { start: hit.offset + start, end: hit.offset + end });
  }
}

/**
 * A body kept in the memory cache gets memory of its own, allocated here on the main thread.
 * A rendered body is sharp's output buffer, malloc'd by the libvips thread that encoded it; kept
 * for minutes among that thread's short-lived allocations, such bodies pin the thread's malloc
 * arena, which then only grows (the soak: +20 MB per 1,800 renders once the cache was full, flat
 * with this copy; docs/reliability.md). One memcpy of a body under `memoryItemMax` costs far less.
 */
function ownCopy(body: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(body.length);
  body.copy(copy);
  return copy;
}
