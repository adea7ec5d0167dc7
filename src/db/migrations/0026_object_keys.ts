import { sql } from 'kysely';
import type { MigrationStep } from './types.js';

/**
 * The S3-compatible surface (docs/s3.md):
 *   - `files.object_key`: the key a file was written under by PutObject (null for files uploaded
 *     any other way, which are the object `<uuid>/<original filename>`), unique among a project's
 *     live files (a removal clears it). PostgreSQL compares it in the "C" collation, so its order
 *     is the UTF-8 byte order S3 lists keys in (SQLite's BINARY already is).
 *   - `files.object_etag`: the S3 ETag of an object assembled from parts (`<md5 of the part
 *     md5s>-<n>`); null when the ETag is the file's MD5.
 *   - the two orders a listing reads, keyset-paginated: keyed files by key, the others by uuid.
 *   - multipart uploads and their parts until completed, aborted or expired.
 */
export const objectKeys: MigrationStep = async (db, dialect) => {
  const keyType = dialect === 'postgres' ? sql`text collate "C"` : sql`text`;
  await db.schema.alterTable('files').addColumn('object_key', keyType).execute();
  await db.schema.alterTable('files').addColumn('object_etag', 'text').execute();
  await sql`create unique index files_object_key on files (project_id, object_key) where object_key is not null`.execute(db);
  // Unkeyed files list by uuid, in byte order too (PostgreSQL: whatever the database's collation).
  const uuidOrder = dialect === 'postgres' ? sql`uuid collate "C"` : sql`uuid`;
  await sql`create index files_unkeyed_objects on files (project_id, ${uuidOrder}) where object_key is null and removed_us is null`.execute(db);

  await db.schema
    .createTable('s3_multipart_uploads')
    .addColumn('upload_id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id'))
    .addColumn('object_key', keyType, (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    // JSON text: Record<string, string> (x-amz-meta-* at CreateMultipartUpload).
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('created_us', 'bigint', (c) => c.notNull())
    .addColumn('expires_us', 'bigint', (c) => c.notNull())
    .execute();
  await sql`create index s3_multipart_uploads_key on s3_multipart_uploads (project_id, object_key, upload_id)`.execute(db);
  await db.schema
    .createTable('s3_multipart_parts')
    .addColumn('upload_id', 'text', (c) => c.notNull())
    .addColumn('part_number', 'integer', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('md5', 'text', (c) => c.notNull())
    .addColumn('blob_key', 'text', (c) => c.notNull())
    .addColumn('uploaded_us', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('s3_multipart_parts_pk', ['upload_id', 'part_number'])
    .execute();
};
