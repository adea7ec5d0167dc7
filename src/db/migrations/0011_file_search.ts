import { sql } from 'kysely';
import type { MigrationStep } from './types.js';

/**
 * File search (docs/files.md): the detected MIME type as its own column (it lived only inside the
 * content_info JSON), and indexes that start with the project for the searchable columns, so a
 * search or a keyset page of one project reads that project's index range only.
 */
export const fileSearch: MigrationStep = async (db) => {
  await db.schema.alterTable('files').addColumn('detected_mime', 'text').execute();
  // Existing rows: the type from content_info, else the declared one (rows older than content_info).
  const rows = await sql<{ uuid: string; content_info: string | null; mime_type: string }>`select uuid, content_info, mime_type from files`.execute(db);
  for (const r of rows.rows) {
    let mime = r.mime_type;
    try {
      mime = r.content_info ? ((JSON.parse(r.content_info) as { mime?: { mime?: string } }).mime?.mime ?? mime) : mime;
    } catch {
      /* keep the declared type */
    }
    await sql`update files set detected_mime = ${mime} where uuid = ${r.uuid}`.execute(db);
  }
  await db.schema.createIndex('files_project_detected_mime').on('files').columns(['project_id', 'detected_mime']).execute();
  await db.schema.createIndex('files_project_size').on('files').columns(['project_id', 'size']).execute();
  await db.schema.createIndex('files_project_original_filename').on('files').columns(['project_id', 'original_filename']).execute();
};
