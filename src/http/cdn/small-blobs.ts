/**
 * Small originals kept in memory: a blob's bytes never change under its key, so a byte-bounded LRU
 * of small files is always correct, and it spares the hot path an open/read/close per request
 * (the role nginx's open_file_cache plays).
 */
import type { BlobStore } from '../../blobs/store.js';

export const SMALL_BLOB_MAX_BYTES = 64 * 1024;

export class SmallBlobCache {
  private readonly entries = new Map<string, Buffer>();
  private bytes = 0;

  constructor(private readonly maxBytes = 64 * 1024 * 1024) {}

  /** The blob's bytes when it is small enough to keep; reads and remembers it on a miss. */
  async get(blobs: BlobStore, key: string): Promise<Buffer> {
    const hit = this.entries.get(key);
    if (hit) {
      // Re-insert to mark it most recently used.
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of await blobs.get(key)) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    this.remember(key, body);
    return body;
  }

  private remember(key: string, body: Buffer): void {
    if (body.length > SMALL_BLOB_MAX_BYTES || this.maxBytes === 0) return;
    this.entries.set(key, body);
    this.bytes += body.length;
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= v.length;
    }
  }
}
