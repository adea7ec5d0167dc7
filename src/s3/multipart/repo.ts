/** Queries of the S3 multipart uploads and their parts (migrations 0026, 0028): rows live until completion, abort or expiry. */
import type { Kysely, Selectable } from 'kysely';
import type { Db, DbOrTrx } from '../../db/connect.js';
import { boundLimit } from '../../db/reusable-query.js';
import type { Database } from '../../db/schema.js';
import type { S3MultipartPartsTable, S3MultipartUploadsTable } from '../../db/tables/s3.js';

export type UploadRow = Selectable<S3MultipartUploadsTable>;
export type PartRow = Selectable<S3MultipartPartsTable>;

export class MultipartRepo {
  private readonly db: Kysely<Database>;

  constructor(store: Db) {
    this.db = store.kysely;
  }

  async insert(trx: DbOrTrx, row: UploadRow): Promise<void> {
    await trx.insertInto('s3_multipart_uploads').values(row).execute();
  }

  async get(uploadId: string): Promise<UploadRow | undefined> {
    return this.db.selectFrom('s3_multipart_uploads').selectAll().where('upload_id', '=', uploadId).executeTakeFirst();
  }

  /** Records a part (a retry of the same number replaces it). */
  async putPart(row: PartRow): Promise<void> {
    await this.db
      .insertInto('s3_multipart_parts')
      .values(row)
      .onConflict((oc) => oc.columns(['upload_id', 'part_number']).doUpdateSet({ size: row.size, md5: row.md5, blob_key: row.blob_key, uploaded_us: row.uploaded_us, place: row.place, store_etag: row.store_etag }))
      .execute();
  }

  /** The part, or undefined. */
  async part(uploadId: string, partNumber: number): Promise<PartRow | undefined> {
    return this.db.selectFrom('s3_multipart_parts').selectAll().where('upload_id', '=', uploadId).where('part_number', '=', partNumber).executeTakeFirst();
  }

  /** Forgets a part whose bytes are about to be rewritten where they are. */
  async deletePart(uploadId: string, partNumber: number): Promise<void> {
    await this.db.deleteFrom('s3_multipart_parts').where('upload_id', '=', uploadId).where('part_number', '=', partNumber).execute();
  }

  /** Fixes the upload's slot size unless a part fixed it first; answers the slot size now recorded. */
  async fixSlot(uploadId: string, bytes: number): Promise<number | null> {
    await this.db.updateTable('s3_multipart_uploads').set({ slot_bytes: bytes }).where('upload_id', '=', uploadId).where('slot_bytes', 'is', null).execute();
    const row = await this.db.selectFrom('s3_multipart_uploads').select('slot_bytes').where('upload_id', '=', uploadId).executeTakeFirst();
    return row?.slot_bytes == null ? null : Number(row.slot_bytes);
  }

  /** Parts in number order, from `after` (exclusive), at most `limit`. */
  async parts(uploadId: string, after = 0, limit = 10_000): Promise<PartRow[]> {
    return this.db.selectFrom('s3_multipart_parts').selectAll().where('upload_id', '=', uploadId).where('part_number', '>', after).orderBy('part_number').limit(boundLimit(limit)).execute();
  }

  /** The project's uploads in key, then upload id order, after a (key, id) marker. */
  async list(projectId: number, prefix: string, afterKey: string, afterId: string, limit: number): Promise<UploadRow[]> {
    let q = this.db
      .selectFrom('s3_multipart_uploads')
      .selectAll()
      .where('project_id', '=', projectId)
      .where((eb) => eb.or([eb('object_key', '>', afterKey), eb.and([eb('object_key', '=', afterKey), eb('upload_id', '>', afterId)])]));
    if (prefix !== '') q = q.where('object_key', '>=', prefix);
    return q.orderBy('object_key').orderBy('upload_id').limit(boundLimit(limit)).execute();
  }

  /** Forgets the upload and its parts (in the caller's transaction); answers the blob keys of the parts that have one. */
  async delete(trx: DbOrTrx, uploadId: string): Promise<string[]> {
    const parts = await trx.selectFrom('s3_multipart_parts').select('blob_key').where('upload_id', '=', uploadId).where('place', '=', 'blob').execute();
    await trx.deleteFrom('s3_multipart_parts').where('upload_id', '=', uploadId).execute();
    await trx.deleteFrom('s3_multipart_uploads').where('upload_id', '=', uploadId).execute();
    return parts.map((p) => p.blob_key);
  }

  /** Which of `ids` still have their upload row (the leftovers sweep keeps their parts). */
  async existing(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db.selectFrom('s3_multipart_uploads').select('upload_id').where('upload_id', 'in', ids).execute();
    return new Set(rows.map((r) => r.upload_id));
  }
}
