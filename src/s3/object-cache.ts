/**
 * Objects by key as last read, for GetObject and HeadObject: an entry answers only while the
 * store's change stamp (db/change-stamp.ts) is the one read before its row was, so a hit is exactly
 * what reading the row would return now (the file row cache's `current` rule, files/record-cache.ts).
 * Without a stamp (PostgreSQL while another process may write) every lookup reads the row.
 * Missing keys are kept too (null): a burst of requests for a missing object reads it once.
 *
 * Why: an object by key costs one or two queries through Kysely and the driver (an unkeyed file's
 * `<uuid>/<name>` misses the key index first), the largest part of a small GetObject's CPU beyond
 * the signature check; the stamp costs a few µs.
 */
import type { ObjectRow } from './repo.js';

interface Entry {
  row: ObjectRow | null;
  stamp: string;
}

export class ObjectCache {
  /** In reading order: the oldest first. */
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly stamp: () => string | null,
    private readonly load: (projectId: number, key: string) => Promise<ObjectRow | null>,
    private readonly maxEntries = 10_000,
  ) {}

  async get(projectId: number, key: string): Promise<ObjectRow | null> {
    const stamp = this.stamp();
    const id = `${projectId}/${key}`;
    const hit = this.entries.get(id);
    if (hit !== undefined && stamp !== null && hit.stamp === stamp) return hit.row;
    // The stamp is read before the row: a change committed in between moves it, so the entry can
    // only be older than its stamp says, which the next lookup then refuses.
    const loaded = await this.load(projectId, key);
    const row = loaded === null ? null : freeze(loaded);
    this.entries.delete(id);
    if (stamp === null) return row;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(id, { row, stamp });
    return row;
  }
}

/** Rows are shared by every hit: frozen, metadata included. */
function freeze(row: ObjectRow): ObjectRow {
  Object.freeze(row.metadata);
  return Object.freeze(row);
}
