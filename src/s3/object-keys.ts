/**
 * Which file holds a key, as last read, for GetObject and HeadObject: an entry answers only while
 * the store's change stamp (db/change-stamp.ts) is the one read before the lookup was, so a hit is
 * exactly what the lookup would return now (the file row cache's `current` rule,
 * files/record-cache.ts). Without a stamp (PostgreSQL while another process may write) every
 * lookup reads the store. Missing keys are kept too (null): a burst of requests for a missing
 * object looks it up once. The file's row itself comes from the one file row cache.
 *
 * Why: finding a key costs one or two queries through Kysely and the driver (an unkeyed file's
 * `<uuid>/<name>` misses the key index first), the largest part of a small GetObject's CPU beyond
 * the signature check; the stamp costs a few µs.
 */
interface Entry {
  uuid: string | null;
  stamp: string;
}

export class ObjectKeys {
  /** In reading order: the oldest first. */
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly stamp: () => string | null,
    private readonly lookup: (projectId: number, key: string) => Promise<string | null>,
    private readonly maxEntries = 10_000,
  ) {}

  /** The stamp entries are read against (the store's change stamp now); null when there is none. */
  now(): string | null {
    return this.stamp();
  }

  /** The last entry id made, kept: a repeated read names the same key, and its id is then neither built nor hashed again. */
  private last = { projectId: -1, key: '', id: '' };

  private idOf(projectId: number, key: string): string {
    const last = this.last;
    if (last.projectId === projectId && last.key === key) return last.id;
    const id = `${projectId}/${key}`;
    this.last = { projectId, key, id };
    return id;
  }

  /** What `uuidOf` would answer from memory at `stamp` (from `now`), without a promise; undefined when it would read the store. */
  uuidAt(projectId: number, key: string, stamp: string): string | null | undefined {
    const hit = this.entries.get(this.idOf(projectId, key));
    return hit !== undefined && hit.stamp === stamp ? hit.uuid : undefined;
  }

  /** The uuid of the live file under `key` in the project, or null. */
  async uuidOf(projectId: number, key: string): Promise<string | null> {
    const stamp = this.stamp();
    const id = this.idOf(projectId, key);
    const hit = this.entries.get(id);
    if (hit !== undefined && stamp !== null && hit.stamp === stamp) return hit.uuid;
    // The stamp is read before the lookup: a change committed in between moves it, so the entry
    // can only be older than its stamp says, which the next lookup then refuses.
    const uuid = await this.lookup(projectId, key);
    this.entries.delete(id);
    if (stamp === null) return uuid;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(id, { uuid, stamp });
    return uuid;
  }
}
