/** Queries for file rows. Every query is scoped to a project except the CDN's lookup by uuid. */
import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Db, DbOrTrx } from '../db/connect.js';
import type { FileRecord } from '../core/file-record.js';
import { uuidInKey } from '../blobs/sweep.js';

type Row = Selectable<Database['files']>;

export function toRecord(r: Row): FileRecord {
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
  };
}

function toRow(f: FileRecord): Row {
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
  };
}

export interface ListQuery {
  projectId: number;
  removed: boolean;
  stored: boolean | null;
  limit: number;
  desc: boolean;
  /** Exclusive cursor: strictly after (asc) or before (desc) this time. */
  afterUs: number | null;
  /** Exclusive reverse cursor for `previous` links: strictly before (asc) or after (desc). */
  beforeUs: number | null;
}

export class FileRepo {
  private readonly db: Kysely<Database>;

  constructor(private readonly store: Db) {
    this.db = store.kysely;
  }

  async insert(db: DbOrTrx, f: FileRecord): Promise<void> {
    await db.insertInto('files').values(toRow(f)).execute();
  }

  async get(projectId: number, uuid: string, db: DbOrTrx = this.db): Promise<FileRecord | null> {
    const r = await db.selectFrom('files').selectAll().where('uuid', '=', uuid).where('project_id', '=', projectId).executeTakeFirst();
    return r ? toRecord(r) : null;
  }

  /** The blob keys among `keys` that some file row points at (the leftovers sweep keeps those). */
  async referencedBlobKeys(keys: string[]): Promise<Set<string>> {
    const byUuid = new Map<string, string>();
    const unjudged = new Set<string>();
    for (const key of keys) {
      const uuid = uuidInKey(key, 'files/');
      if (uuid) byUuid.set(uuid, key);
      else unjudged.add(key);
    }
    if (byUuid.size === 0) return unjudged;
    const rows = await this.db.selectFrom('files').select('blob_key').where('uuid', 'in', [...byUuid.keys()]).where('blob_key', 'is not', null).execute();
    const wanted = new Set(keys);
    for (const r of rows) if (r.blob_key && wanted.has(r.blob_key)) unjudged.add(r.blob_key);
    return unjudged;
  }

  async getMany(projectId: number, uuids: string[], db: DbOrTrx = this.db): Promise<FileRecord[]> {
    if (uuids.length === 0) return [];
    const rows = await db.selectFrom('files').selectAll().where('project_id', '=', projectId).where('uuid', 'in', uuids).execute();
    return rows.map(toRecord);
  }

  /** For the CDN, which knows only the uuid. */
  async byUuid(uuid: string): Promise<FileRecord | null> {
    const r = await this.db.selectFrom('files').selectAll().where('uuid', '=', uuid).executeTakeFirst();
    return r ? toRecord(r) : null;
  }

  async list(q: ListQuery): Promise<FileRecord[]> {
    let s = this.db.selectFrom('files').selectAll().where('project_id', '=', q.projectId);
    s = q.removed ? s.where('removed_us', 'is not', null) : s.where('removed_us', 'is', null);
    if (q.stored === true) s = s.where('stored_us', 'is not', null);
    if (q.stored === false) s = s.where('stored_us', 'is', null);
    if (q.afterUs !== null) s = s.where('uploaded_us', q.desc ? '<' : '>', q.afterUs);
    if (q.beforeUs !== null) s = s.where('uploaded_us', q.desc ? '>' : '<', q.beforeUs);
    // A `previous` page walks backwards from its cursor, then is flipped back into display order.
    const backwards = q.beforeUs !== null && q.afterUs === null;
    const desc = backwards ? !q.desc : q.desc;
    const rows = await s.orderBy('uploaded_us', desc ? 'desc' : 'asc').limit(q.limit).execute();
    const records = rows.map(toRecord);
    return backwards ? records.reverse() : records;
  }

  async count(q: Pick<ListQuery, 'projectId' | 'removed' | 'stored'>): Promise<number> {
    let s = this.db.selectFrom('files').select((eb) => eb.fn.countAll<number>().as('n')).where('project_id', '=', q.projectId);
    s = q.removed ? s.where('removed_us', 'is not', null) : s.where('removed_us', 'is', null);
    if (q.stored === true) s = s.where('stored_us', 'is not', null);
    if (q.stored === false) s = s.where('stored_us', 'is', null);
    return Number((await s.executeTakeFirstOrThrow()).n);
  }

  async totals(projectId: number): Promise<{ removed: number; stored: number; unstored: number }> {
    const [removed, stored, unstored] = await Promise.all([
      this.count({ projectId, removed: true, stored: null }),
      this.count({ projectId, removed: false, stored: true }),
      this.count({ projectId, removed: false, stored: false }),
    ]);
    return { removed, stored, unstored };
  }

  async update(db: DbOrTrx, projectId: number, uuid: string, patch: Partial<Pick<Row, 'stored_us' | 'removed_us' | 'metadata' | 'appdata' | 'blob_key'>>): Promise<void> {
    await db.updateTable('files').set(patch).where('uuid', '=', uuid).where('project_id', '=', projectId).execute();
  }

  /** The bytes of a removed file are gone: forget their key. */
  async forgetBlob(projectId: number, uuid: string): Promise<void> {
    await this.update(this.db, projectId, uuid, { blob_key: null });
  }

  /** The newest live file of the project fetched from this URL (from_url duplicate check). */
  async latestFromUrl(projectId: number, sourceUrl: string): Promise<FileRecord | null> {
    const r = await this.db
      .selectFrom('files')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('source_url', '=', sourceUrl)
      .where('removed_us', 'is', null)
      .orderBy('uploaded_us', 'desc')
      .limit(1)
      .executeTakeFirst();
    return r ? toRecord(r) : null;
  }

  /** Locks a row for a read-modify-write (PostgreSQL); SQLite transactions are already serial. */
  async getForUpdate(trx: DbOrTrx, projectId: number, uuid: string): Promise<FileRecord | null> {
    let s = trx.selectFrom('files').selectAll().where('uuid', '=', uuid).where('project_id', '=', projectId);
    if (this.store.dialect === 'postgres') s = s.forUpdate();
    const r = await s.executeTakeFirst();
    return r ? toRecord(r) : null;
  }

  /** Unstored, not removed files uploaded before the cutoff (the expiry sweep). */
  async expired(cutoffUs: number, limit: number): Promise<Array<{ uuid: string; projectId: number }>> {
    const rows = await this.db
      .selectFrom('files')
      .select(['uuid', 'project_id'])
      .where('stored_us', 'is', null)
      .where('removed_us', 'is', null)
      .where('uploaded_us', '<', cutoffUs)
      .orderBy('uploaded_us')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ uuid: r.uuid, projectId: Number(r.project_id) }));
  }
}
