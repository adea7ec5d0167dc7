/**
 * The S3 surface's reads of the files table (writes go through FileService): an object by key,
 * and listing pages in key order. A listing merges two keyset-paginated orders, each read from
 * its own partial index (migration 0026): files written by PutObject by `object_key`, and the
 * others, whose key is `<uuid>/<original filename>`, by uuid (36 characters of a fixed shape, so
 * the uuid order is their key order). Both compare bytes ("C" collation on PostgreSQL), so a page
 * costs the same at 1 M files as at 10 k.
 */
import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import type { Db } from '../db/connect.js';
import { boundLimit } from '../db/reusable-query.js';
import type { Database } from '../db/schema.js';
import type { FileRecord } from '../core/file-record.js';
import { uuidObjectKey } from '../core/object-key.js';

export interface ObjectRow {
  uuid: string;
  key: string;
  size: number;
  md5: string;
  /** The multipart ETag; null when the ETag is the MD5. */
  etag: string | null;
  /** The Content-Type the client gave (the declared type). */
  contentType: string;
  uploadedUs: number;
  metadata: Record<string, string>;
  blobKey: string | null;
}

const COLUMNS = ['uuid', 'object_key', 'original_filename', 'size', 'md5', 'object_etag', 'mime_type', 'uploaded_us', 'metadata', 'blob_key'] as const;

type Selected = Pick<Selectable<Database['files']>, (typeof COLUMNS)[number]>;

function toObject(r: Selected): ObjectRow {
  return {
    uuid: r.uuid,
    key: r.object_key ?? `${r.uuid}/${r.original_filename}`,
    size: Number(r.size),
    md5: r.md5,
    etag: r.object_etag,
    contentType: r.mime_type,
    uploadedUs: Number(r.uploaded_us),
    metadata: JSON.parse(r.metadata) as Record<string, string>,
    blobKey: r.blob_key,
  };
}

/** Object rows of cached file records, one per record (records are frozen and shared while cached). */
const objectsOfFiles = new WeakMap<Readonly<FileRecord>, ObjectRow>();

/** The object a file is: as `toObject` reads it from the row, here from a file record. */
export function objectOfFile(file: Readonly<FileRecord>): ObjectRow {
  let row = objectsOfFiles.get(file);
  if (row === undefined) {
    row = Object.freeze({
      uuid: file.uuid,
      key: file.objectKey ?? `${file.uuid}/${file.originalFilename}`,
      size: file.size,
      md5: file.md5,
      etag: file.objectEtag ?? null,
      contentType: file.declaredType,
      uploadedUs: file.uploadedUs,
      metadata: file.metadata,
      blobKey: file.blobKey,
    });
    objectsOfFiles.set(file, row);
  }
  return row;
}

/** A range of keys: those after `after` (exclusive) that start with `prefix`. */
export interface KeyRange {
  after: string;
  prefix: string;
}

export class ObjectRepo {
  private readonly db: Kysely<Database>;
  private readonly uuidOrder: RawBuilder<string>;

  constructor(store: Db) {
    this.db = store.kysely;
    this.uuidOrder = store.dialect === 'postgres' ? sql<string>`uuid collate "C"` : sql<string>`uuid`;
  }

  /** The live object under `key`: the file written under it, else the unkeyed file `<uuid>/<name>`. */
  async byKey(projectId: number, key: string): Promise<ObjectRow | null> {
    const keyed = await this.db.selectFrom('files').select(COLUMNS).where('project_id', '=', projectId).where('object_key', '=', key).executeTakeFirst();
    if (keyed) return toObject(keyed);
    const named = uuidObjectKey(key);
    if (!named) return null;
    const r = await this.db
      .selectFrom('files')
      .select(COLUMNS)
      .where('uuid', '=', named.uuid)
      .where('project_id', '=', projectId)
      .where('object_key', 'is', null)
      .where('removed_us', 'is', null)
      .where('original_filename', '=', named.name)
      .executeTakeFirst();
    return r ? toObject(r) : null;
  }

  /** Up to `limit` files written under a key, in key order. */
  async keyed(projectId: number, range: KeyRange, limit: number): Promise<ObjectRow[]> {
    let q = this.db.selectFrom('files').select(COLUMNS).where('project_id', '=', projectId).where('object_key', 'is not', null).where('object_key', '>', range.after);
    if (range.prefix !== '') {
      q = q.where('object_key', '>=', range.prefix);
      const upper = prefixEnd(range.prefix);
      if (upper !== null) q = q.where('object_key', '<', upper);
    }
    const rows = await q.orderBy('object_key').limit(boundLimit(limit)).execute();
    return rows.map(toObject);
  }

  /**
   * Up to `limit` files without a key, in uuid order, whose `<uuid>/<name>` key is in the range.
   * Bounds on the uuid come from the range; the few rows sharing the bound's uuid are filtered here.
   */
  async unkeyed(projectId: number, range: KeyRange, limit: number): Promise<ObjectRow[]> {
    const low = range.after.slice(0, 36) > range.prefix.slice(0, 36) ? range.after.slice(0, 36) : range.prefix.slice(0, 36);
    let q = this.db.selectFrom('files').select(COLUMNS).where('project_id', '=', projectId).where('object_key', 'is', null).where('removed_us', 'is', null).where(this.uuidOrder, '>=', low);
    const upper = range.prefix === '' ? null : prefixEnd(range.prefix.slice(0, 36));
    if (upper !== null) q = q.where(this.uuidOrder, '<', upper);
    const rows = await q.orderBy(this.uuidOrder).limit(boundLimit(limit)).execute();
    return rows.map(toObject).filter((o) => compareKeys(o.key, range.after) > 0 && o.key.startsWith(range.prefix));
  }
}

/** The smallest string above every string starting with `prefix`, or null when there is none. */
export function prefixEnd(prefix: string): string | null {
  const points = [...prefix];
  while (points.length > 0) {
    const last = (points.pop() as string).codePointAt(0) as number;
    // The next code point (skipping surrogates, which UTF-8 keys never hold).
    const next = last === 0xd7ff ? 0xe000 : last + 1;
    if (next <= 0x10ffff) return points.join('') + String.fromCodePoint(next);
  }
  return null;
}

/** Keys in UTF-8 byte order, which is code point order (JavaScript's < compares UTF-16 units). */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate (a code point above U+FFFF) sorts after every other UTF-16 unit.
    const sx = x >= 0xd800 && x <= 0xdfff;
    const sy = y >= 0xd800 && y <= 0xdfff;
    if (sx !== sy) return sx ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}
