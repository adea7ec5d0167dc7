/**
 * A file's key on the S3-compatible surface (docs/s3.md): the key PutObject wrote it under, else
 * `<uuid>/<original filename>` for a file uploaded any other way.
 */
import type { FileRecord } from './file-record.js';
import { parseUuid } from './ids.js';

export function objectKeyOf(file: Pick<FileRecord, 'uuid' | 'originalFilename' | 'objectKey'>): string {
  return file.objectKey ?? `${file.uuid}/${file.originalFilename}`;
}

/** The file a key of the `<uuid>/<original filename>` form names, or null for any other key. */
export function uuidObjectKey(key: string): { uuid: string; name: string } | null {
  const slash = key.indexOf('/');
  if (slash !== 36 || key.length === 37) return null;
  const uuid = parseUuid(key.slice(0, 36));
  // Only the canonical spelling: the listing shows that one, and a key names one object.
  return uuid && uuid === key.slice(0, 36) ? { uuid, name: key.slice(37) } : null;
}
