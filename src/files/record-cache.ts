/**
 * The node's one cache of file rows, by uuid (a uuid names one file in one project), shared by the
 * REST reads of one file (info, tags, metadata, the quick read in front of Fastify) and the CDN.
 * Unknown uuids are kept too (null), so a burst of requests for a missing file reads it once.
 *
 * When an entry may answer (docs/files.md, "The file row cache"):
 *   - `current` (REST): only while the store's change stamp (db/change-stamp.ts) is the one read
 *     before the row was: any change of any row, by this node or any other process, moves it, so a
 *     hit is exactly what a read of the row would return now. Without a stamp (PostgreSQL while
 *     another process may write, db/pg-alone.ts) every call reads the row.
 *   - `recent` (CDN): also while the entry is younger than `recentForMs`, whatever changed since:
 *     delivery is the hottest path and a row it serves changes rarely. This node's own removals,
 *     restores and late digests drop the entry at once (`drop`, called by FileService), so only
 *     another node's change can be served that late.
 *
 * Why: through Kysely and the driver a primary-key read of a file costs 30-40 µs of CPU, most of a
 * signed `GET /files/{uuid}/` beyond the bare route (docs/performance.md); the stamp costs 2-4 µs.
 *
 * The stamp is read before the row: a change committed between the two moves the stamp, so the
 * entry can only be older than its stamp says, which the next lookup's stamp then refuses. A row
 * read while its file was dropped is not kept (it may predate the change). Records handed out are
 * frozen, shared by every hit: a caller that needs to change one builds a new one.
 */
import type { FileRecord } from '../core/file-record.js';

interface Entry {
  file: FileRecord | null;
  /** The store's change stamp read before the row was; null when the store had none. */
  stamp: string | null;
  /** When the row was read (performance.now()). */
  at: number;
}

export interface FileRecordCacheOptions {
  /** How long an entry answers `recent` reads whatever changed since it was read. */
  recentForMs?: number;
  /** Bound on entries; the oldest go first. */
  maxEntries?: number;
}

export class FileRecordCache {
  /** In the order the entries were read: the oldest come first. */
  private readonly entries = new Map<string, Entry>();
  /** Counts `drop` calls: a row read across one is not kept. */
  private drops = 0;
  private readonly recentForMs: number;
  private readonly maxEntries: number;

  constructor(
    private readonly stamp: () => string | null,
    private readonly load: (uuid: string) => Promise<FileRecord | null>,
    opts: FileRecordCacheOptions = {},
  ) {
    this.recentForMs = opts.recentForMs ?? 2000;
    this.maxEntries = opts.maxEntries ?? 50_000;
  }

  /**
   * What `current` would answer now from memory, without a promise (null: no such file);
   * undefined when `current` would read the row. `stamp`: one the caller has just read, so that
   * several caches consulted for one answer agree on the moment (and the stamp is read once).
   */
  peek(uuid: string, stamp: string | null = this.stamp()): FileRecord | null | undefined {
    const hit = this.entries.get(uuid);
    if (hit === undefined || hit.stamp === null) return undefined;
    return hit.stamp === stamp ? hit.file : undefined;
  }

  /** The file (any project, removed ones included) exactly as stored now, or null. */
  async current(uuid: string): Promise<FileRecord | null> {
    const stamp = this.stamp();
    const hit = this.entries.get(uuid);
    if (hit !== undefined && stamp !== null && hit.stamp === stamp) return hit.file;
    return this.fill(uuid, stamp);
  }

  /** As `current`, or as it was read at most `recentForMs` ago on this node. */
  recent(uuid: string): Promise<FileRecord | null> {
    const hit = this.entries.get(uuid);
    if (hit === undefined) return this.current(uuid);
    const now = performance.now();
    if (now - hit.at < this.recentForMs) return Promise.resolve(hit.file);
    if (hit.stamp === null || hit.stamp !== this.stamp()) return this.current(uuid);
    // The stamp vouches for the entry now, as a fresh read would: it starts a new window, so a
    // hot file costs one stamp read per window instead of one per request.
    this.entries.delete(uuid);
    this.entries.set(uuid, { file: hit.file, stamp: hit.stamp, at: now });
    return Promise.resolve(hit.file);
  }

  /** Forgets the file: this node changed it (FileService calls this once the change committed). */
  drop(uuid: string): void {
    this.drops++;
    this.entries.delete(uuid);
  }

  /** Entries held now (outdated ones included until the next read drops them). */
  get size(): number {
    return this.entries.size;
  }

  private async fill(uuid: string, stamp: string | null): Promise<FileRecord | null> {
    const at = performance.now();
    const drops = this.drops;
    const loaded = await this.load(uuid);
    const file = loaded === null ? null : deepFreeze(loaded);
    if (this.drops !== drops) return file;
    this.dropOutdated(stamp, performance.now());
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    // Deleted first so the entry moves to the end, keeping the map in reading order.
    this.entries.delete(uuid);
    this.entries.set(uuid, { file, stamp, at });
    return file;
  }

  /**
   * Entries that can answer no read any more (older than `recentForMs`, of another stamp or none)
   * go as new ones come, oldest first, so while rows change the map holds about the rows read in
   * the last `recentForMs` rather than filling to `maxEntries` before the oldest go.
   */
  private dropOutdated(stamp: string | null, now: number): void {
    for (const [uuid, entry] of this.entries) {
      if (now - entry.at < this.recentForMs || (entry.stamp !== null && entry.stamp === stamp)) return;
      this.entries.delete(uuid);
    }
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
