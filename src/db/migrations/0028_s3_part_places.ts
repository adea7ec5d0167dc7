import type { MigrationStep } from './types.js';

/**
 * Where the S3 surface's multipart parts are (src/s3/multipart/):
 *   - `s3_multipart_uploads.slot_bytes`: on a blob store with local files, the size of each part's
 *     slot in the upload's data file (part n at (n - 1) × slot), fixed by the first part written;
 *     null until then.
 *   - `s3_multipart_uploads.store_upload_id`: on object storage, the bucket's own multipart upload
 *     the parts go to (it completes into the file's blob key); null elsewhere.
 *   - `s3_multipart_parts.place`: `blob` (a blob of its own at `blob_key`), `slot` (in the data
 *     file at its slot) or `bucket` (a part of the bucket's upload, whose ETag is `store_etag`).
 */
export const s3PartPlaces: MigrationStep = async (db) => {
  await db.schema.alterTable('s3_multipart_uploads').addColumn('slot_bytes', 'bigint').execute();
  await db.schema.alterTable('s3_multipart_uploads').addColumn('store_upload_id', 'text').execute();
  await db.schema.alterTable('s3_multipart_parts').addColumn('place', 'text', (c) => c.notNull().defaultTo('blob')).execute();
  await db.schema.alterTable('s3_multipart_parts').addColumn('store_etag', 'text').execute();
};
