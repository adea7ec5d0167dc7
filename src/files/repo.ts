/** Queries for file rows. Every query is scoped to a project except the CDN's lookup by uuid. */
import { CompiledQuery, sql, type Kysely, type SqlBool } from 'kysely';
import type { SearchCursor, SearchQuery } from './search-query.js';
import type { Database } from '../db/schema.js';
import type { Db, DbOrTrx } from '../db/connect.js';
import { literalLimit, reusableQuery } from '../db/reusable-query.js';
import { ReadBatcher, type ReadBatchStats } from '../db/read-batcher.js';
import { DeferredTextIndex } from './text/repo.js';
import type { FileRecord } from '../core/file-record.js';
import { uuidObjectKey } from '../core/object-key.js';
import { insertLabels, replaceLabels } from './labels/repo.js';
import { FILE_COLUMNS, toRecord, toRow, type FileRow as Row } from './file-row.js';
import { FileListRepo, type CountedList, type FileTotals, type ListQuery, type SizeListQuery } from './list/repo.js';
import { FileSearchRepo } from './search/repo.js';

// The list's and the search's queries are in list/repo.ts and search/repo.ts, a row's columns in
// file-row.ts; FileRepo answers for all of them.
export { toRecord } from './file-row.js';
export type { CountedList, ListQuery, SizeKey, SizeListQuery } from './list/repo.js';
export type { SearchCursor };

/**
 * `project_id = ?` beside a `uuid IN (…)` (the rows of a batch, found by uuid), written so that no
 * index serves it (`+project_id`). Written plainly, SQLite, which has no statistics, took an index
 * starting with project_id for the cheaper read and walked every file of the project: a fan-out's
 * read of 32 files 1.2 ms instead of 0.32 ms with 1,000 files in the project, growing with it.
 */
const inProject = (projectId: number) => sql<SqlBool>`+${sql.ref('project_id')} = ${projectId}`;

// Every new file runs it: compiled once per store (db/reusable-query.ts).
const insertFile = reusableQuery((db: DbOrTrx, ...values: Row[keyof Row][]) =>
  db.insertInto('files').values(Object.fromEntries(FILE_COLUMNS.map((c, i) => [c, values[i]])) as Row),
);

export class FileRepo {
  private readonly db: Kysely<Database>;
  // The two lookups every file info and CDN request makes, compiled once (db/reusable-query.ts).
  // Per repository: the SQL text depends on the store's dialect.
  private readonly fileInProject = reusableQuery((db: DbOrTrx, uuid: string, projectId: number) =>
    db.selectFrom('files').selectAll().where('uuid', '=', uuid).where('project_id', '=', projectId),
  );
  private readonly fileByUuid = reusableQuery((db: DbOrTrx, uuid: string) => db.selectFrom('files').selectAll().where('uuid', '=', uuid));

  /**
   * PostgreSQL: the lookups by uuid made outside a transaction (every file info and CDN request),
   * read together when they arrive together (db/read-batcher.ts). SQLite's reads are a synchronous
   * call in this process, with nothing to save by batching.
   */
  private readonly batchedRows: ReadBatcher<string, Row> | null;

  /** SQLite: new files' text joins the trigram index in batches (text/repo.ts). */
  readonly textIndex: DeferredTextIndex;
  private readonly lists: FileListRepo;
  private readonly searches: FileSearchRepo;

  constructor(private readonly store: Db) {
    this.db = store.kysely;
    this.batchedRows = store.dialect === 'postgres' ? new ReadBatcher((uuids) => this.rowsByUuid(uuids)) : null;
    this.textIndex = new DeferredTextIndex(store);
    this.lists = new FileListRepo(store);
    this.searches = new FileSearchRepo(store, this.textIndex);
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

  private async rowsByUuid(uuids: readonly string[]): Promise<Map<string, Row>> {
    const { rows } = await this.db.executeQuery<Row>(CompiledQuery.raw('SELECT * FROM files WHERE uuid = ANY($1::text[])', [uuids]));
    return new Map(rows.map((r) => [r.uuid, r]));
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
    const rows = await db.selectFrom('files').selectAll().where(inProject(projectId)).where('uuid', 'in', uuids).execute();
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

  list(q: ListQuery): Promise<FileRecord[]> {
    return this.lists.list(q);
  }

  /** A page with the list's `total` and `totals` (list/repo.ts). */
  listWithTotals(q: ListQuery): Promise<CountedList> {
    return this.lists.listWithTotals(q);
  }

  /** The batched list pages' counts; null on SQLite, which reads without batching. */
  listBatchStats(): Readonly<ReadBatchStats> | null {
    return this.lists.batchedPages?.stats ?? null;
  }

  listBySize(q: SizeListQuery): Promise<FileRecord[]> {
    return this.lists.listBySize(q);
  }

  /** The list's `total` (list/repo.ts). */
  count(q: Pick<ListQuery, 'projectId' | 'removed' | 'stored' | 'tags'>): Promise<number> {
    return this.lists.count(q);
  }

  /** The list's `total` and `totals` from one read of the counters (list/repo.ts). */
  countAndTotals(q: Pick<ListQuery, 'projectId' | 'removed' | 'stored' | 'tags'>): Promise<{ total: number; totals: FileTotals }> {
    return this.lists.countAndTotals(q);
  }

  /** The list's `totals` (list/repo.ts). */
  totals(projectId: number): Promise<{ removed: number; stored: number; unstored: number }> {
    return this.lists.totals(projectId);
  }

  /** Appdata is not here: setAppdata keeps its label rows with it. */
  async update(db: DbOrTrx, projectId: number, uuid: string, patch: Partial<Pick<Row, 'stored_us' | 'removed_us' | 'metadata' | 'blob_key' | 'md5' | 'object_key' | 'restore_until_us'>>): Promise<void> {
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
      .limit(literalLimit(1))
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
   * The live file an S3 key names, locked (a PutObject replaces it): the file written under that
   * key, else, for a key `<uuid>/<original filename>`, that file when it has no key of its own.
   */
  async objectHolderForUpdate(trx: DbOrTrx, projectId: number, key: string): Promise<FileRecord | null> {
    const lock = <T extends { forUpdate(): T }>(q: T): T => (this.store.dialect === 'postgres' ? q.forUpdate() : q);
    const keyed = await lock(trx.selectFrom('files').selectAll().where('project_id', '=', projectId).where('object_key', '=', key)).executeTakeFirst();
    if (keyed) return toRecord(keyed);
    const named = uuidObjectKey(key);
    if (!named) return null;
    const r = await lock(
      trx
        .selectFrom('files')
        .selectAll()
        .where('uuid', '=', named.uuid)
        .where('project_id', '=', projectId)
        .where('object_key', 'is', null)
        .where('removed_us', 'is', null)
        .where('original_filename', '=', named.name),
    ).executeTakeFirst();
    return r ? toRecord(r) : null;
  }

  /**
   * getForUpdate for several files of one project in one query, by uuid. Rows are locked in uuid
   * order, so two batches over the same files lock them in the same order (no deadlock).
   */
  async getManyForUpdate(trx: DbOrTrx, projectId: number, uuids: readonly string[]): Promise<Map<string, FileRecord>> {
    if (uuids.length === 0) return new Map();
    let s = trx.selectFrom('files').selectAll().where(inProject(projectId)).where('uuid', 'in', [...uuids]).orderBy('uuid');
    if (this.store.dialect === 'postgres') s = s.forUpdate();
    return new Map((await s.execute()).map((r) => [r.uuid, toRecord(r)]));
  }

  /** Marks the project's files stored at `t` (a batch store; removed ones among them restored), one statement. */
  async markStored(db: DbOrTrx, projectId: number, uuids: readonly string[], t: number): Promise<void> {
    await db.updateTable('files').set({ stored_us: t, removed_us: null, restore_until_us: null }).where(inProject(projectId)).where('uuid', 'in', [...uuids]).execute();
  }

  /** Until when each of the project's removed `uuids` can be stored again (absent: never). Locked rows: read in the same transaction. */
  async restorableUntil(db: DbOrTrx, projectId: number, uuids: readonly string[]): Promise<Map<string, number>> {
    if (uuids.length === 0) return new Map();
    const rows = await db
      .selectFrom('files')
      .select(['uuid', 'restore_until_us'])
      .where(inProject(projectId))
      .where('uuid', 'in', [...uuids])
      .where('restore_until_us', 'is not', null)
      .execute();
    return new Map(rows.map((r) => [r.uuid, Number(r.restore_until_us)]));
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
      .limit(literalLimit(limit))
      .execute();
    return rows.map((r) => ({ uuid: r.uuid, projectId: Number(r.project_id) }));
  }

  /** One page of a search (search/repo.ts). */
  search(projectId: number, q: SearchQuery, page: { limit: number; offset: number; cursor: SearchCursor | null }): Promise<FileRecord[]> {
    return this.searches.search(projectId, q, page);
  }

  /** The database's plan for one search page (search/repo.ts). */
  searchPlan(projectId: number, q: SearchQuery, limit: number): Promise<string[]> {
    return this.searches.searchPlan(projectId, q, limit);
  }

  searchCount(projectId: number, q: SearchQuery): Promise<number> {
    return this.searches.searchCount(projectId, q);
  }
}
