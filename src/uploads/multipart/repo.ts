/** Queries of the multipart_uploads table: one row per started multipart upload until it expires. */
import type { Kysely, Selectable } from 'kysely';
import type { Db, DbOrTrx } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import type { MultipartUploadsTable } from '../../db/tables/uploads.js';

export type MultipartRow = Selectable<MultipartUploadsTable>;

export class MultipartRepo {
  private readonly db: Kysely<Database>;

  constructor(store: Db) {
    this.db = store.kysely;
  }

  async insert(trx: DbOrTrx, row: MultipartRow): Promise<void> {
    await trx.insertInto('multipart_uploads').values(row).execute();
  }

  /** The upload, in the project when one is given. */
  async get(uuid: string, projectId?: number): Promise<MultipartRow | undefined> {
    let q = this.db.selectFrom('multipart_uploads').selectAll().where('uuid', '=', uuid);
    if (projectId !== undefined) q = q.where('project_id', '=', projectId);
    return q.executeTakeFirst();
  }

  /** The completion state of the upload (see claim.ts), or undefined when the row is gone. */
  async claimState(uuid: string): Promise<Pick<MultipartRow, 'state' | 'claimed_us'> | undefined> {
    return this.db.selectFrom('multipart_uploads').select(['state', 'claimed_us']).where('uuid', '=', uuid).executeTakeFirst();
  }

  /**
   * Flips an open upload to `completing` stamped `token`, or takes over a completion stamped
   * before `staleBeforeUs`. False when another completion holds it or it is done.
   */
  async claim(uuid: string, token: number, staleBeforeUs: number): Promise<boolean> {
    const r = await this.db
      .updateTable('multipart_uploads')
      .set({ state: 'completing', claimed_us: token })
      .where('uuid', '=', uuid)
      .where((eb) => eb.or([eb('state', '=', 'open'), eb.and([eb('state', '=', 'completing'), eb('claimed_us', '<', staleBeforeUs)])]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Compare-and-swap of the claim's stamp; false when the claim is no longer `token`'s. */
  async renewClaim(uuid: string, token: number, next: number): Promise<boolean> {
    const r = await this.db
      .updateTable('multipart_uploads')
      .set({ claimed_us: next })
      .where('uuid', '=', uuid)
      .where('state', '=', 'completing')
      .where('claimed_us', '=', token)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Ends the claim stamped `token` (no-op when another completion holds it now). */
  async releaseClaim(uuid: string, token: number, state: 'open' | 'done'): Promise<void> {
    await this.db.updateTable('multipart_uploads').set({ state }).where('uuid', '=', uuid).where('claimed_us', '=', token).execute();
  }

  /** Which of `uuids` still have their row (the leftovers sweep keeps their keys). */
  async existing(uuids: string[]): Promise<Set<string>> {
    if (uuids.length === 0) return new Set();
    const rows = await this.db.selectFrom('multipart_uploads').select('uuid').where('uuid', 'in', uuids).execute();
    return new Set(rows.map((r) => r.uuid));
  }

  async delete(uuid: string): Promise<void> {
    await this.db.deleteFrom('multipart_uploads').where('uuid', '=', uuid).execute();
  }
}
