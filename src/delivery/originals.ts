/**
 * Originals kept in memory: a blob's bytes never change under its key, so a byte-bounded LRU of
 * originals is always correct. Raw delivery answers from it without an open/read/close per request
 * (the role nginx's open_file_cache and the page cache play), and the image pipeline decodes from
 * it without re-reading the file, with the header facts (kind, sharp metadata) worked out once per
 * original and kept beside its bytes.
 *
 * One instance per delivery feature, shared by raw delivery and the renderer.
 *
 * Concurrent misses on one key share a single read, so a burst on a cold file holds one copy; the
 * bytes being read for distinct keys at once are bounded too (by the cache's size): past that
 * bound a request is told to stream instead, so many cold files at once cannot grow memory.
 */
import type { BlobStore } from '../blobs/store.js';
import type { SourceMemo } from '../media/pipeline/source.js';

export interface Original {
  bytes: Buffer;
  /** Facts derived from `bytes` by the pipeline; shared by every request for this original. */
  memo: SourceMemo;
}

const MAX_ENTRIES = 100_000;

export class OriginalsCache {
  private readonly entries = new Map<string, Original>();
  private readonly loading = new Map<string, Promise<Original>>();
  private bytes = 0;
  private loadingBytes = 0;

  constructor(readonly blobs: BlobStore, private readonly maxBytes: number, private readonly itemMaxBytes: number) {}

  /** The original when in memory now (marked most recently used), without a promise; else null. */
  held(key: string): Original | null {
    const hit = this.entries.get(key);
    if (hit === undefined) return null;
    // Re-inserted to mark it most recently used.
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit;
  }

  /**
   * The original's bytes, from memory or read whole and remembered; null when the caller should
   * stream from the store instead (too large to keep, cache off, or too much being read at once).
   */
  async get(key: string, size: number): Promise<Original | null> {
    const hit = this.held(key);
    if (hit) return hit;
    let pending = this.loading.get(key);
    if (!pending) {
      if (this.maxBytes === 0 || size > this.itemMaxBytes || this.loadingBytes + size > this.maxBytes) return null;
      this.loadingBytes += size;
      pending = this.load(key, size).finally(() => {
        this.loading.delete(key);
        this.loadingBytes -= size;
      });
      this.loading.set(key, pending);
    }
    return pending;
  }

  private async load(key: string, size: number): Promise<Original> {
    const bytes = await readExactly(this.blobs, key, size);
    const entry: Original = { bytes, memo: {} };
    this.remember(key, entry);
    return entry;
  }

  private remember(key: string, entry: Original): void {
    this.entries.set(key, entry);
    this.bytes += entry.bytes.length;
    for (const [k, v] of this.entries) {
      // The count bound keeps a flood of tiny originals from growing the map itself.
      if (this.bytes <= this.maxBytes && this.entries.size <= MAX_ENTRIES) break;
      this.entries.delete(k);
      this.bytes -= v.bytes.length;
    }
  }
}

/** Reads a blob into one buffer of its recorded size (no concatenation copy). */
async function readExactly(blobs: BlobStore, key: string, size: number): Promise<Buffer> {
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for await (const chunk of await blobs.get(key)) {
    const piece = chunk as Buffer;
    if (at + piece.length > size) throw new Error(`blob ${key} is larger than its recorded ${size} bytes`);
    piece.copy(out, at);
    at += piece.length;
  }
  if (at !== size) throw new Error(`blob ${key} has ${at} bytes, its record says ${size}`);
  return out;
}
