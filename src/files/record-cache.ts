/**
 * File records for the REST reads of one file (info, tags, metadata), kept per node while the
 * store's change stamp (db/change-stamp.ts) has not moved: a hit is exactly what a read of the row
 * would return now, whichever node or process changed it. When the store has no stamp (PostgreSQL
 * while another process may write: nodes share the store there, and asking it is the round trip a
 * cache would save; db/pg-alone.ts) every call reads the row.
 *
 * Why: through Kysely and the driver a primary-key read of a file costs 30-40 µs of CPU, most of a
 * signed `GET /files/{uuid}/` beyond the bare route (docs/performance.md); the stamp costs 2-4 µs.
 * Any change of any row moves the stamp, so a node taking writes misses more; it is never stale.
 *
 * The stamp is read before the row: a change committed between the two moves the stamp, so the
 * entry can only be older than its stamp says, which the next lookup's stamp then refuses. Records
 * handed out are frozen, shared by every hit: a caller that needs to change one builds a new one.
 */
import type { FileRecord } from '../core/file-record.js';

interface Entry {
  stamp: string;
  file: FileRecord;
}

export class FileRecordCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly stamp: () => string | null,
    private readonly maxEntries = 1000,
  ) {}

  /**
   * The entry of the current stamp, without a promise: exactly what `get` would answer now from
   * the cache; undefined when `get` would load the row (no entry, an older stamp, no stamp).
   */
  peek(projectId: number, uuid: string): FileRecord | undefined {
    const hit = this.entries.get(`${projectId}/${uuid}`);
    if (hit === undefined) return undefined;
    return hit.stamp === this.stamp() ? hit.file : undefined;
  }

  /** The file `load` would return now; `load` runs unless an entry of the current stamp exists. */
  async get(projectId: number, uuid: string, load: () => Promise<FileRecord | null>): Promise<FileRecord | null> {
    const stamp = this.stamp();
    if (stamp === null) return load();
    const key = `${projectId}/${uuid}`;
    const hit = this.entries.get(key);
    if (hit !== undefined && hit.stamp === stamp) return hit.file;
    const file = await load();
    if (file === null) {
      this.entries.delete(key);
      return null;
    }
    // Bounded by clearing, like the other per-node caches: refilling costs one read each.
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    const frozen = deepFreeze(file);
    this.entries.set(key, { stamp, file: frozen });
    return frozen;
  }
}

/** Frozen all the way down: a record shared by every reader (list/record-versions.ts too). */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
