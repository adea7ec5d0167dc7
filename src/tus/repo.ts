/** Queries of the tus_uploads table: one row per tus upload until it expires (docs/tus.md). */
import type { Kysely, Selectable } from 'kysely';
import type { Db } from '../db/connect.js';
import { literalLimit } from '../db/reusable-query.js';
import type { Database } from '../db/schema.js';
import type { TusUploadsTable } from '../db/tables/tus.js';

export type TusRow = Selectable<TusUploadsTable>;

export class TusRepo {
  private readonly db: Kysely<Database>;

  constructor(store: Db) {
    this.db = store.kysely;
  }

  async insert(row: TusRow): Promise<void> {
    await this.db.insertInto('tus_uploads').values(row).execute();
  }

  async get(id: string): Promise<TusRow | undefined> {
    return this.db.selectFrom('tus_uploads').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Total Upload-Length of the project's unfinished, unexpired uploads (only `client`'s, when given). */
  async openBytes(projectId: number, nowUs: number, client?: string): Promise<number> {
    let q = this.db
      .selectFrom('tus_uploads')
      .select((eb) => eb.fn.sum<number | string | null>('length').as('total'))
      .where('project_id', '=', projectId)
      .where('state', '=', 'open')
      .where('expires_us', '>', nowUs);
    if (client !== undefined) q = q.where('client', '=', client);
    const r = await q.executeTakeFirst();
    return Number(r?.total ?? 0);
  }

  /**
   * Moves the durable offset from `from` to `to` (compare-and-swap) and pushes the expiry back.
   * False when the row is gone or another writer moved it.
   */
  async advance(id: string, from: number, to: number, expiresUs: number): Promise<boolean> {
    const r = await this.db
      .updateTable('tus_uploads')
      .set({ received: to, expires_us: expiresUs })
      .where('id', '=', id)
      .where('state', '=', 'open')
      .where('received', '=', from)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** The upload made its file; the row answers HEAD and info until `expiresUs`. */
  async markDone(id: string, expiresUs: number): Promise<void> {
    await this.db.updateTable('tus_uploads').set({ state: 'done', expires_us: expiresUs }).where('id', '=', id).execute();
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('tus_uploads').where('id', '=', id).execute();
  }

  /** Up to `limit` uploads past their expiry (unfinished ones and the records of finished ones). */
  async expired(nowUs: number, limit: number): Promise<Array<Pick<TusRow, 'id' | 'state'>>> {
    return this.db.selectFrom('tus_uploads').select(['id', 'state']).where('expires_us', '<', nowUs).orderBy('expires_us').limit(literalLimit(limit)).execute();
  }

  /** Which of `ids` still have their row. */
  async existingIds(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db.selectFrom('tus_uploads').select('id').where('id', 'in', ids).execute();
    return new Set(rows.map((r) => r.id));
  }

  /** Which of `uuids` are the file of an upload still open (its completion may be under way). */
  async openFileUuids(uuids: string[]): Promise<Set<string>> {
    if (uuids.length === 0) return new Set();
    const rows = await this.db.selectFrom('tus_uploads').select('file_uuid').where('file_uuid', 'in', uuids).where('state', '=', 'open').execute();
    return new Set(rows.map((r) => r.file_uuid));
  }
}
