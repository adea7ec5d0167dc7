/** A file row and the FileRecord it holds, both ways, with the list of its columns. */
import type { ExpressionBuilder, Selectable } from 'kysely';
import type { Database } from '../db/schema.js';
import type { FileRecord } from '../core/file-record.js';

export type FileRow = Selectable<Database['files']>;
/** A query's view of the files table (list and search conditions). */
export type FilesEb = ExpressionBuilder<Database, 'files'>;

export function toRecord(r: FileRow): FileRecord {
  const contentInfo = r.content_info ? (JSON.parse(r.content_info) as FileRecord['contentInfo']) : null;
  return {
    uuid: r.uuid,
    projectId: Number(r.project_id),
    uploadedUs: r.uploaded_us,
    storedUs: r.stored_us,
    removedUs: r.removed_us,
    size: Number(r.size),
    // The column holds the declared type; rows written before it did hold the sniffed one there.
    mimeType: contentInfo?.mime.mime ?? r.mime_type,
    declaredType: r.mime_type,
    originalFilename: r.original_filename,
    filename: r.filename,
    isImage: r.is_image === 1,
    isReady: r.is_ready === 1,
    contentInfo,
    metadata: JSON.parse(r.metadata) as Record<string, string>,
    appdata: JSON.parse(r.appdata) as FileRecord['appdata'],
    blobKey: r.blob_key,
    md5: r.md5,
    sourceUrl: r.source_url,
    tags: JSON.parse(r.tags) as string[],
    ...(typeof r.object_key === 'string' ? { objectKey: r.object_key } : {}),
    ...(typeof r.object_etag === 'string' ? { objectEtag: r.object_etag } : {}),
  };
}

export function toRow(f: FileRecord): FileRow {
  return {
    uuid: f.uuid,
    project_id: f.projectId,
    uploaded_us: f.uploadedUs,
    stored_us: f.storedUs,
    removed_us: f.removedUs,
    size: f.size,
    mime_type: f.declaredType,
    original_filename: f.originalFilename,
    filename: f.filename,
    is_image: f.isImage ? 1 : 0,
    is_ready: f.isReady ? 1 : 0,
    content_info: f.contentInfo ? JSON.stringify(f.contentInfo) : null,
    metadata: JSON.stringify(f.metadata),
    appdata: JSON.stringify(f.appdata),
    blob_key: f.blobKey,
    md5: f.md5,
    source_url: f.sourceUrl,
    tags: JSON.stringify(f.tags),
    detected_mime: f.mimeType,
    object_key: f.objectKey ?? null,
    object_etag: f.objectEtag ?? null,
    restore_until_us: null,
  };
}

/** Every column of a file row, in the order insertFile binds them. */
export const FILE_COLUMNS = [
  'uuid', 'project_id', 'uploaded_us', 'stored_us', 'removed_us', 'size', 'mime_type', 'original_filename', 'filename', 'is_image',
  'is_ready', 'content_info', 'metadata', 'appdata', 'blob_key', 'md5', 'source_url', 'tags', 'detected_mime',
  'object_key', 'object_etag', 'restore_until_us',
] as const satisfies readonly (keyof FileRow)[];
// A column added to the table but not to the list fails the build here instead of going unwritten.
const everyColumn: Exclude<keyof FileRow, (typeof FILE_COLUMNS)[number]> extends never ? true : never = true;
void everyColumn;
