/**
 * File rows for the CDN, cached briefly: delivery is the hottest path and a row changes only when
 * the file is removed, which this process invalidates at once (other nodes within `ttlMs`).
 */
import type { FileRecord } from '../core/file-record.js';
import type { FileRows } from './render-file.js';

export class FileLookup {
  private readonly cache = new Map<string, { file: FileRecord | null; at: number }>();

  constructor(private readonly files: FileRows, private readonly ttlMs = 2000, private readonly maxEntries = 50_000) {}

  /** The deliverable file, or null when unknown, removed, or its bytes are gone. */
  async get(uuid: string): Promise<FileRecord | null> {
    const now = Date.now();
    const hit = this.cache.get(uuid);
    if (hit && now - hit.at < this.ttlMs) return hit.file;
    const row = await this.files.byUuid(uuid);
    const file = row && row.removedUs === null && row.blobKey ? row : null;
    if (this.cache.size >= this.maxEntries) this.cache.clear();
    // Negative answers are cached too, but a new upload will not wait long: same short TTL.
    this.cache.set(uuid, { file, at: now });
    return file;
  }

  invalidate(uuid: string): void {
    this.cache.delete(uuid);
  }
}
