/** Queries for file rows. Every query is scoped to a project except the CDN's lookup by uuid. */
import { CompiledQuery, sql, type ExpressionBuilder, type Kysely, type Selectable, type SqlBool, type Expression } from 'kysely';
import { searchOrder, type SearchCursor, type SearchQuery, type Range, type SortColumn } from './search-query.js';
import type { Database } from '../db/schema.js';
import type { Db, DbOrTrx } from '../db/connect.js';
import { reusableQuery } from '../db/reusable-query.js';
import type { ReadBatcher, ReadBatchStats } from '../db/read-batcher.js';
import { fileRowBatcher } from './batched-rows.js';
import { DeferredTextIndex } from './text/repo.js';
import { readCounters } from '../db/project-counters.js';
import type { FileRecord } from '../core/file-record.js';
import { insertLabels, labelsCondition, replaceLabels, startFromLabels } from './labels/repo.js';

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
    tags: JSON.parse(r.tags) as string[],
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
    tags: JSON.stringify(f.tags),
    detected_mime: f.mimeType,
  };
}

/** Every column of a file row, in the order insertFile binds them. */
const FILE_COLUMNS = [
  'uuid', 'project_id', 'uploaded_us', 'stored_us', 'removed_us', 'size', 'mime_type', 'original_filename', 'filename', 'is_image',
  'is_ready', 'content_info', 'metadata', 'appdata', 'blob_key', 'md5', 'source_url', 'tags', 'detected_mime',
] as const satisfies readonly (keyof Row)[];
// A column added to the table but not to the list fails the build here instead of going unwritten.
const everyColumn: Exclude<keyof Row, (typeof FILE_COLUMNS)[number]> extends never ? true : never = true;
void everyColumn;

// Every new file runs it: compiled once per store (db/reusable-query.ts).
const insertFile = reusableQuery((db: DbOrTrx, ...values: Row[keyof Row][]) =>
  db.insertInto('files').values(Object.fromEntries(FILE_COLUMNS.map((c, i) => [c, values[i]])) as Row),
);

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
  /** Only files carrying every one of these tags (normalized). */
  tags?: string[];
}

/** A position in v0.6's size order: ties on size are broken by upload time (unique per project). */
export interface SizeKey {
  size: number;
  us: number;
}

/** `ListQuery` ordered by size (REST v0.6 `ordering=size|-size`), with size-key cursors. */
export interface SizeListQuery extends Omit<ListQuery, 'afterUs' | 'beforeUs'> {
  after: SizeKey | null;
  before: SizeKey | null;
}

export type { SearchCursor };

type FilesEb = ExpressionBuilder<Database, 'files'>;
type TextColumn = 'original_filename' | 'detected_mime' | 'metadata';

export class FileRepo {
  private readonly db: Kysely<Database>;
  // The two lookups every file info and CDN request makes, compiled once (db/reusable-query.ts).
  // Per repository: the SQL text depends on the store's dialect.
  private readonly fileInProject = reusableQuery((db: DbOrTrx, uuid: string, projectId: number) =>
    db.selectFrom('files').selectAll().where('uuid', '=', uuid).where('project_id', '=', projectId),
  );
  private readonly fileByUuid = reusableQuery((db: DbOrTrx, uuid: string) => db.selectFrom('files').selectAll().where('uuid', '=', uuid));

  /** PostgreSQL: the lookups by uuid outside a transaction, batched (batched-rows.ts). */
  private readonly batchedRows: ReadBatcher<string, Row> | null;

  /** SQLite: new files' text joins the trigram index in batches (text/repo.ts). */
  readonly textIndex: DeferredTextIndex;

  constructor(private readonly store: Db) {
    this.db = store.kysely;
    this.batchedRows =
      store.dialect === 'postgres'
        ? fileRowBatcher(async (uuids) => (await this.db.executeQuery<Row>(CompiledQuery.raw('SELECT * FROM files WHERE uuid = ANY($1::text[])', [uuids]))).rows)
        : null;
    this.textIndex = new DeferredTextIndex(store);
  }

  async insert(db: DbOrTrx, f: FileRecord): Promise<void> {
    const row = toRow(f);
    await insertFile(db, ...FILE_COLUMNS.map((c) => row[c]));
    if (f.tags.length > 0) await db.insertInto('file_tags').values(f.tags.map((tag) => ({ project_id: f.projectId, tag, uuid: f.uuid }))).execute();
    await insertLabels(db, f.projectId, f.uuid, f.appdata);
  }

  /** Writes a file's appdata and replaces its label rows (inside the caller's transaction). */
  async setAppdata(db: DbOrTrx, projectId: number, uuid: string, appdata: FileRecord['appdata']): Promise<void> {
    await db.updateTable('files').set({ appdata: JSON.stringify(appdata) }).where('uuid', '=', uuid).where('project_id', '=', projectId).execute();
    await replaceLabels(db, projectId, uuid, appdata);
  }

  /** Writes a file's new tag list and its index rows (inside the caller's transaction). */
  async setTags(db: DbOrTrx, projectId: number, uuid: string, change: { tags: string[]; added: string[]; deleted: string[] }): Promise<void> {
    await db.updateTable('files').set({ tags: JSON.stringify(change.tags) }).where('uuid', '=', uuid).where('project_id', '=', projectId).execute();
    if (change.deleted.length > 0) {
      await db.deleteFrom('file_tags').where('project_id', '=', projectId).where('uuid', '=', uuid).where('tag', 'in', change.deleted).execute();
    }
    if (change.added.length > 0) await db.insertInto('file_tags').values(change.added.map((tag) => ({ project_id: projectId, tag, uuid }))).execute();
  }

  /** The batched lookups' counts; null on SQLite, which reads without batching. */
  readBatchStats(): Readonly<ReadBatchStats> | null {
    return this.batchedRows?.stats ?? null;
  }

  async get(projectId: number, uuid: string, db: DbOrTrx = this.db): Promise<FileRecord | null> {
    if (db === this.db && this.batchedRows) {
      const row = await this.batchedRows.get(uuid);
      return row && Number(row.project_id) === projectId ? toRecord(row) : null;
    }
    const [r] = (await this.fileInProject(db, uuid, projectId)).rows;
    return r ? toRecord(r) : null;
  }

  async getMany(projectId: number, uuids: string[], db: DbOrTrx = this.db): Promise<FileRecord[]> {
    if (uuids.length === 0) return [];
    const rows = await db.selectFrom('files').selectAll().where('project_id', '=', projectId).where('uuid', 'in', uuids).execute();
    return rows.map(toRecord);
  }

  /** Rows with these uuids in any project (an import must not take a uuid another project holds). */
  async byUuids(uuids: string[]): Promise<FileRecord[]> {
    if (uuids.length === 0) return [];
    const rows = await this.db.selectFrom('files').selectAll().where('uuid', 'in', uuids).execute();
    return rows.map(toRecord);
  }

  /** For the CDN, which knows only the uuid. */
  async byUuid(uuid: string): Promise<FileRecord | null> {
    const [r] = this.batchedRows ? [await this.batchedRows.get(uuid)] : (await this.fileByUuid(this.db, uuid)).rows;
    return r ? toRecord(r) : null;
  }

  async list(q: ListQuery): Promise<FileRecord[]> {
    let s = this.db.selectFrom('files').selectAll().where('project_id', '=', q.projectId);
    s = q.removed ? s.where('removed_us', 'is not', null) : s.where('removed_us', 'is', null);
    if (q.stored === true) s = s.where('stored_us', 'is not', null);
    if (q.stored === false) s = s.where('stored_us', 'is', null);
    for (const tag of q.tags ?? []) {
      s = s.where('uuid', 'in', (eb) => eb.selectFrom('file_tags').select('uuid').where('project_id', '=', q.projectId).where('tag', '=', tag));
    }
    if (q.afterUs !== null) s = s.where('uploaded_us', q.desc ? '<' : '>', q.afterUs);
    if (q.beforeUs !== null) s = s.where('uploaded_us', q.desc ? '>' : '<', q.beforeUs);
    // A `previous` page walks backwards from its cursor, then is flipped back into display order.
    const backwards = q.beforeUs !== null && q.afterUs === null;
    const desc = backwards ? !q.desc : q.desc;
    const rows = await s.orderBy('uploaded_us', desc ? 'desc' : 'asc').limit(q.limit).execute();
    const records = rows.map(toRecord);
    return backwards ? records.reverse() : records;
  }

  async listBySize(q: SizeListQuery): Promise<FileRecord[]> {
    let s = this.db.selectFrom('files').selectAll().where('project_id', '=', q.projectId);
    s = q.removed ? s.where('removed_us', 'is not', null) : s.where('removed_us', 'is', null);
    if (q.stored === true) s = s.where('stored_us', 'is not', null);
    if (q.stored === false) s = s.where('stored_us', 'is', null);
    for (const tag of q.tags ?? []) {
      s = s.where('uuid', 'in', (eb) => eb.selectFrom('file_tags').select('uuid').where('project_id', '=', q.projectId).where('tag', '=', tag));
    }
    const beyond = (key: SizeKey, up: boolean) => (eb: FilesEb) =>
      eb.or([eb('size', up ? '>' : '<', key.size), eb.and([eb('size', '=', key.size), eb('uploaded_us', up ? '>' : '<', key.us)])]);
    if (q.after) s = s.where(beyond(q.after, !q.desc));
    if (q.before) s = s.where(beyond(q.before, q.desc));
    const backwards = q.before !== null && q.after === null;
    const dir = (backwards ? !q.desc : q.desc) ? 'desc' : 'asc';
    const rows = await s.orderBy('size', dir).orderBy('uploaded_us', dir).limit(q.limit).execute();
    const records = rows.map(toRecord);
    return backwards ? records.reverse() : records;
  }

  /**
   * The list's `total`. Without a tag filter the counters answer it (removed; live, stored,
   * unstored: db/project-counters.ts), removed files by stored time with the help of an index of the
   * removed files that keep one (imports); a tag filter is counted from file_tags' key.
   */
  async count(q: Pick<ListQuery, 'projectId' | 'removed' | 'stored' | 'tags'>): Promise<number> {
    if ((q.tags ?? []).length > 0) return this.countTagged(q, q.tags!);
    const c = await readCounters(this.db, q.projectId);
    if (q.removed) {
      if (q.stored === null) return c.removed;
      const keepingStored = await this.countRemovedKeepingStored(q.projectId);
      return q.stored ? keepingStored : c.removed - keepingStored;
    }
    if (q.stored === null) return c.stored + c.unstored;
    return q.stored ? c.stored : c.unstored;
  }

  /** Removed files with a stored time, through the partial index files_removed_stored (migration 0018). */
  private async countRemovedKeepingStored(projectId: number): Promise<number> {
    const r = await this.db
      .selectFrom('files')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('project_id', '=', projectId)
      .where('removed_us', 'is not', null)
      .where('stored_us', 'is not', null)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /**
   * Files carrying every tag, counted from the first tag's rows in file_tags' key (a cross join:
   * SQLite keeps that order, where an `uuid IN (…)` let it walk every file of the project and probe).
   */
  private async countTagged(q: Pick<ListQuery, 'projectId' | 'removed' | 'stored'>, [first, ...rest]: string[]): Promise<number> {
    let s = this.db
      .selectFrom('file_tags as t')
      .crossJoin('files as f')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('t.project_id', '=', q.projectId)
      .where('t.tag', '=', first!)
      .whereRef('f.uuid', '=', 't.uuid')
      .where('f.project_id', '=', q.projectId);
    s = q.removed ? s.where('f.removed_us', 'is not', null) : s.where('f.removed_us', 'is', null);
    if (q.stored === true) s = s.where('f.stored_us', 'is not', null);
    if (q.stored === false) s = s.where('f.stored_us', 'is', null);
    for (const tag of rest) {
      s = s.where('f.uuid', 'in', (eb) => eb.selectFrom('file_tags').select('file_tags.uuid').where('file_tags.project_id', '=', q.projectId).where('file_tags.tag', '=', tag));
    }
    return Number((await s.executeTakeFirstOrThrow()).n);
  }

  /** The list's `totals`: one read of the project's counters. */
  async totals(projectId: number): Promise<{ removed: number; stored: number; unstored: number }> {
    const { removed, stored, unstored } = await readCounters(this.db, projectId);
    return { removed, stored, unstored };
  }

  /** Appdata is not here: setAppdata keeps its label rows with it. */
  async update(db: DbOrTrx, projectId: number, uuid: string, patch: Partial<Pick<Row, 'stored_us' | 'removed_us' | 'metadata' | 'blob_key'>>): Promise<void> {
    await db.updateTable('files').set(patch).where('uuid', '=', uuid).where('project_id', '=', projectId).execute();
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

  /**
   * getForUpdate for several files of one project in one query, by uuid. Rows are locked in uuid
   * order, so two batches over the same files lock them in the same order (no deadlock).
   */
  async getManyForUpdate(trx: DbOrTrx, projectId: number, uuids: readonly string[]): Promise<Map<string, FileRecord>> {
    if (uuids.length === 0) return new Map();
    let s = trx.selectFrom('files').selectAll().where('project_id', '=', projectId).where('uuid', 'in', [...uuids]).orderBy('uuid');
    if (this.store.dialect === 'postgres') s = s.forUpdate();
    return new Map((await s.execute()).map((r) => [r.uuid, toRecord(r)]));
  }

  /** Marks the project's files stored at `t` (a batch store), one statement. */
  async markStored(db: DbOrTrx, projectId: number, uuids: readonly string[], t: number): Promise<void> {
    await db.updateTable('files').set({ stored_us: t }).where('project_id', '=', projectId).where('uuid', 'in', [...uuids]).execute();
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

  /** One page of a search: keyset after `cursor` when given, else `offset` rows skipped. */
  async search(projectId: number, q: SearchQuery, page: { limit: number; offset: number; cursor: SearchCursor | null }): Promise<FileRecord[]> {
    await this.textReady(q);
    const order = searchOrder(q);
    const plan = await this.labelsPlan(projectId, q);
    let s = this.db.selectFrom('files').selectAll().where((eb) => this.searchWhere(eb, projectId, q, plan));
    const cursor = page.cursor;
    if (cursor && cursor.length === order.length) s = s.where((eb) => seek(eb, order, cursor));
    for (const k of order) s = s.orderBy(k.column, k.desc ? 'desc' : 'asc');
    const rows = await s.limit(page.limit).offset(cursor ? 0 : page.offset).execute();
    return rows.map(toRecord);
  }

  /** A text condition reads the trigram index: every committed file must be in it first (text/repo.ts). */
  private async textReady(q: SearchQuery): Promise<void> {
    if (q.text || q.phrase.filename || q.phrase.mime || q.phrase.metadata) await this.textIndex.flush();
  }

  /** The database's plan for one search page, one line per step (tests prove the text index is used). */
  async searchPlan(projectId: number, q: SearchQuery, limit: number): Promise<string[]> {
    const plan = await this.labelsPlan(projectId, q);
    let s = this.db.selectFrom('files').selectAll().where((eb) => this.searchWhere(eb, projectId, q, plan));
    for (const k of searchOrder(q)) s = s.orderBy(k.column, k.desc ? 'desc' : 'asc');
    const page = s.limit(limit).compile();
    const prefix = this.store.dialect === 'postgres' ? 'explain ' : 'explain query plan ';
    const r = await this.db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(prefix + page.sql, [...page.parameters]));
    return r.rows.map((row) => String(row['QUERY PLAN'] ?? row['detail'] ?? JSON.stringify(row)));
  }

  async searchCount(projectId: number, q: SearchQuery): Promise<number> {
    await this.textReady(q);
    const plan = await this.labelsPlan(projectId, q);
    const r = await this.db
      .selectFrom('files')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where((eb) => this.searchWhere(eb, projectId, q, plan))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** `fromLabels`: SQLite should start from file_labels (labels/repo.ts); PostgreSQL's planner decides alone. */
  private async labelsPlan(projectId: number, q: SearchQuery): Promise<{ fromLabels: boolean }> {
    const sqlite = this.store.dialect !== 'postgres' && q.labels.length > 0;
    return { fromLabels: sqlite && (await startFromLabels(this.db, projectId, q.labels)) };
  }

  private searchWhere(eb: FilesEb, projectId: number, q: SearchQuery, plan: { fromLabels: boolean }): Expression<SqlBool> {
    const pg = this.store.dialect === 'postgres';
    // `+project_id` takes the project index out of SQLite's choice, which then starts from the labels.
    const all: Array<Expression<SqlBool>> = [plan.fromLabels ? sql<SqlBool>`+${sql.ref('project_id')} = ${projectId}` : eb('project_id', '=', projectId)];
    all.push(q.removed ? eb('removed_us', 'is not', null) : eb('removed_us', 'is', null));
    if (q.stored === true) all.push(eb('stored_us', 'is not', null));
    if (q.stored === false) all.push(eb('stored_us', 'is', null));
    if (q.isImage !== null) all.push(eb('is_image', '=', q.isImage ? 1 : 0));
    // Substrings through a trigram index (migration 0012): pg_trgm GIN on lower(column) serves the
    // LIKE; on SQLite the FTS5 trigram table answers MATCH, joined back through files_text_keys.
    const contains = (columns: TextColumn[], text: string): Expression<SqlBool> => {
      if (pg) return eb.or(columns.map((c) => sql<SqlBool>`lower(${sql.ref(c)}) like ${`%${escapeLike(text.toLowerCase())}%`} escape '!'`));
      const match = `{${columns.join(' ')}} : "${text.replace(/"/g, '""')}"`;
      return sql<SqlBool>`${sql.ref('uuid')} in (select k.uuid from files_text_keys k where k.id in (select rowid from files_text where files_text match ${match}))`;
    };
    if (q.text) all.push(contains(['original_filename', 'detected_mime', 'metadata'], q.text));
    if (q.phrase.filename) all.push(contains(['original_filename'], q.phrase.filename));
    if (q.phrase.mime) all.push(contains(['detected_mime'], q.phrase.mime));
    if (q.phrase.metadata) all.push(contains(['metadata'], q.phrase.metadata));
    if (q.exact.uuids) all.push(eb('uuid', 'in', q.exact.uuids));
    if (q.exact.mimes) all.push(eb('detected_mime', 'in', q.exact.mimes));
    if (q.exact.filenames) all.push(eb('original_filename', 'in', q.exact.filenames));
    for (const [key, values] of q.exact.metadata) {
      const value = pg ? sql`(metadata::jsonb ->> ${key})` : sql`json_extract(metadata, ${`$."${key}"`})`;
      all.push(sql<SqlBool>`${value} in (${sql.join(values)})`);
    }
    all.push(...rangeOf(eb, 'uploaded_us', q.uploaded), ...rangeOf(eb, 'size', q.size));
    const tagged = (tag: string) => eb.selectFrom('file_tags').select('file_tags.uuid').where('file_tags.project_id', '=', projectId).where('file_tags.tag', '=', tag);
    for (const tag of q.tags.all) all.push(eb('uuid', 'in', tagged(tag)));
    if (q.tags.any.length > 0) all.push(eb('uuid', 'in', eb.selectFrom('file_tags').select('file_tags.uuid').where('file_tags.project_id', '=', projectId).where('file_tags.tag', 'in', q.tags.any)));
    if (q.tags.none.length > 0) all.push(eb('uuid', 'not in', eb.selectFrom('file_tags').select('file_tags.uuid').where('file_tags.project_id', '=', projectId).where('file_tags.tag', 'in', q.tags.none)));
    // Label names add-ons wrote in appdata, through file_labels (migration 0017).
    if (q.labels.length > 0) all.push(labelsCondition(eb, projectId, q.labels));
    return eb.and(all);
  }
}

function escapeLike(text: string): string {
  return text.replace(/[!%_]/g, (c) => `!${c}`);
}

function rangeOf(eb: FilesEb, column: 'uploaded_us' | 'size', r: Range): Array<Expression<SqlBool>> {
  const out: Array<Expression<SqlBool>> = [];
  if (r.gt !== undefined) out.push(eb(column, '>', r.gt));
  if (r.gte !== undefined) out.push(eb(column, '>=', r.gte));
  if (r.lt !== undefined) out.push(eb(column, '<', r.lt));
  if (r.lte !== undefined) out.push(eb(column, '<=', r.lte));
  return out;
}

/** Rows strictly after the cursor in the sort order: (k1 beyond) or (k1 equal and k2 beyond) or … */
function seek(eb: FilesEb, order: Array<{ column: SortColumn; desc: boolean }>, cursor: SearchCursor): Expression<SqlBool> {
  const ors: Array<Expression<SqlBool>> = [];
  for (let i = 0; i < order.length; i++) {
    const ands: Array<Expression<SqlBool>> = [];
    for (let j = 0; j < i; j++) ands.push(eb(order[j]!.column, '=', cursor[j] as never));
    ands.push(eb(order[i]!.column, order[i]!.desc ? '<' : '>', cursor[i] as never));
    ors.push(eb.and(ands));
  }
  return eb.or(ors);
}
