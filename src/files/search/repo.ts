/** File search (`POST /files/search/`): its conditions, pages, count and plan. */
import { CompiledQuery, sql, type Kysely, type SqlBool, type Expression } from 'kysely';
import { searchOrder, type SearchCursor, type SearchQuery, type Range, type SortColumn } from '../search-query.js';
import type { Database } from '../../db/schema.js';
import type { Db } from '../../db/connect.js';
import { boundLimit } from '../../db/reusable-query.js';
import type { DeferredTextIndex } from '../text/repo.js';
import type { FileRecord } from '../../core/file-record.js';
import { labelsCondition, startFromLabels } from '../labels/repo.js';
import { toRecord, type FilesEb } from '../file-row.js';

type TextColumn = 'original_filename' | 'detected_mime' | 'metadata';

export class FileSearchRepo {
  private readonly db: Kysely<Database>;

  constructor(
    private readonly store: Db,
    private readonly textIndex: DeferredTextIndex,
  ) {
    this.db = store.kysely;
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
    const rows = await s.limit(boundLimit(page.limit)).offset(cursor ? 0 : page.offset).execute();
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
    const page = s.limit(boundLimit(limit)).compile();
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
