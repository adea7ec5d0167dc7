/**
 * File rows for the CDN, cached briefly: delivery is the hottest path and a row changes only when
 * the file is removed, which this process invalidates at once (other nodes within `ttlMs`).
 */
import type { FileRecord } from '../core/file-record.js';
import type { FileRows } from './render-file.js';

export class FileLookup {
  /** In the order the entries were read: every entry lives `ttlMs`, so the oldest come first. */
  private readonly cache = new Map<string, { file: FileRecord | null; at: number }>();

  constructor(private readonly files: FileRows, private readonly ttlMs = 2000, private readonly maxEntries = 50_000) {}

  /** The deliverable file, or null when unknown, removed, or its bytes are gone. */
  async get(uuid: string): Promise<FileRecord | null> {
    const now = Date.now();
    const hit = this.cache.get(uuid);
    if (hit && now - hit.at < this.ttlMs) return hit.file;
    const row = await this.files.byUuid(uuid);
    const file = row && row.removedUs === null && row.blobKey ? row : null;
    this.dropExpired(Date.now());
    if (this.cache.size >= this.maxEntries) this.cache.clear();
    // Negative answers are cached too, but a new upload will not wait long: same short TTL.
    // Deleted first so the entry moves to the end, keeping the map in reading order.
    this.cache.delete(uuid);
    this.cache.set(uuid, { file, at: now });
    return file;
  }

  invalidate(uuid: string): void {
    this.cache.delete(uuid);
  }

  /** Entries held now (expired ones included until the next read drops them). */
  get size(): number {
    return this.cache.size;
  }

  /**
   * Expired entries go as new ones come, oldest first, so the map holds about the rows read in the
   * last `ttlMs` rather than filling to `maxEntries` (tens of MB of records) before a clear.
   */
  private dropExpired(now: number): void {
    for (const [uuid, entry] of this.cache) {
      if (now - entry.at < this.ttlMs) return;
      this.cache.delete(uuid);
    }
  }
}
