/**
 * Queries for `file_contents`: which blob holds a project's bytes with a given SHA-256, and
 * whether any file row still uses a blob. Both halves lock the content row (PostgreSQL; SQLite
 * transactions are serial already), so an upload that starts sharing a blob and the reclaim of
 * that blob's last reference never interleave: the bytes are never dropped under a new row.
 */
import type { Db, DbOrTrx } from '../../db/connect.js';
import { literalLimit, reusableQuery } from '../../db/reusable-query.js';

// Every new upload runs it: compiled once per store (db/reusable-query.ts).
const insertContent = reusableQuery((trx: DbOrTrx, projectId: number, sha256: string, blobKey: string, size: number, createdUs: number) =>
  trx
    .insertInto('file_contents')
    .values({ project_id: projectId, sha256, blob_key: blobKey, size, created_us: createdUs })
    .onConflict((oc) => oc.doNothing())
    .returning('blob_key'),
);

export class ContentRepo {
  constructor(private readonly store: Db) {}

  /**
   * The blob that holds the project's bytes with this digest: the one registered before (locked
   * until the caller's transaction ends), else `stagedKey`, registered now. A concurrent upload of
   * the same bytes waits on the insert and then finds this one.
   */
  async claim(trx: DbOrTrx, c: { projectId: number; sha256: string; size: number; stagedKey: string; nowUs: number }): Promise<string> {
    // PostgreSQL: the insert can find a committed row that the reclaim of its last file is deleting
    // right now; the locking read then waits for that and sees no row. The next insert succeeds.
    for (let attempt = 0; attempt < 5; attempt++) {
      // Most uploads bring new bytes: the insert answers their row itself, one statement (one
      // round trip on PostgreSQL) instead of an insert and a read. The row is this transaction's,
      // so it is locked until the commit as the read's FOR UPDATE would lock it.
      const [inserted] = (await insertContent(trx, c.projectId, c.sha256, c.stagedKey, c.size, c.nowUs)).rows;
      if (inserted) return inserted.blob_key;
      let s = trx.selectFrom('file_contents').select('blob_key').where('project_id', '=', c.projectId).where('sha256', '=', c.sha256);
      if (this.store.dialect === 'postgres') s = s.forUpdate();
      const row = await s.executeTakeFirst();
      if (row) return row.blob_key;
    }
    throw new Error(`content row of ${c.sha256} kept vanishing`);
  }

  /**
   * One file stops using `blobKey` (its bytes are being reclaimed). True when no row uses the blob
   * any more: its content row is gone too and the caller deletes the bytes once this commits.
   */
  async release(trx: DbOrTrx, projectId: number, uuid: string, blobKey: string): Promise<boolean> {
    let lock = trx.selectFrom('file_contents').select('blob_key').where('blob_key', '=', blobKey);
    if (this.store.dialect === 'postgres') lock = lock.forUpdate();
    await lock.executeTakeFirst();
    await trx.updateTable('files').set({ blob_key: null }).where('uuid', '=', uuid).where('project_id', '=', projectId).where('blob_key', '=', blobKey).execute();
    const user = await trx.selectFrom('files').select('uuid').where('blob_key', '=', blobKey).limit(literalLimit(1)).executeTakeFirst();
    if (user) return false;
    await trx.deleteFrom('file_contents').where('blob_key', '=', blobKey).execute();
    return true;
  }

  /** Of `keys`, the ones a file row or a content row names (the leftovers sweep keeps those). */
  async inUse(keys: string[]): Promise<Set<string>> {
    const db = this.store.kysely;
    const [files, contents] = await Promise.all([
      db.selectFrom('files').select('blob_key').where('blob_key', 'in', keys).execute(),
      db.selectFrom('file_contents').select('blob_key').where('blob_key', 'in', keys).execute(),
    ]);
    const used = new Set<string>();
    for (const r of [...files, ...contents]) if (r.blob_key) used.add(r.blob_key);
    return used;
  }
}
