/** The REST file list: pages in upload-time or size order, and its `total` and `totals`. */
import type { Kysely, QueryResult, Selectable } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Db, DbOrTrx } from '../../db/connect.js';
import { countersBatcher, readCounters, type ProjectCounts } from '../../db/project-counters.js';
import type { ReadBatcher } from '../../db/read-batcher.js';
import { literalLimit, ReusableQueriesByShape } from '../../db/reusable-query.js';
import type { FileRecord } from '../../core/file-record.js';
import type { FileRow, FilesEb } from '../file-row.js';
import { RecordVersions } from './record-versions.js';
import { BatchedListPages, type PageShape } from './batched/repo.js';

type Row = Selectable<Database['files']>;
type CountQuery = Pick<ListQuery, 'projectId' | 'removed' | 'stored' | 'tags'>;
/** The list's `totals`. */
export interface FileTotals {
  removed: number;
  stored: number;
  unstored: number;
}
/** A page of the list with its `total` and `totals` (`listWithTotals`). */
export interface CountedList {
  records: FileRecord[];
  total: number;
  totals: FileTotals;
}
/** A page of the upload-time list without tags, by its shape's compiled query (`untaggedPage`). */
type PageArgs = [projectId: number, afterUs: number | null, beforeUs: number | null];
type PageQuery = (db: DbOrTrx, ...args: PageArgs) => Promise<QueryResult<Row>>;

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

export class FileListRepo {
  private readonly db: Kysely<Database>;
  /** PostgreSQL: the counters read by concurrent lists of a project in one round trip. */
  private readonly batchedCounters: ReadBatcher<number, ProjectCounts> | null;
  /** PostgreSQL: untagged pages with their counters, concurrent ones in one round trip (batched/repo.ts). */
  readonly batchedPages: BatchedListPages | null;
  /**
   * The untagged upload-time pages by shape (filters, order, which cursors are set, the LIMIT):
   * few shapes in practice, each built and compiled once (db/reusable-query.ts), where building and
   * compiling the query cost about as much as SQLite running it (docs/performance.md).
   */
  private readonly pageQueries = new ReusableQueriesByShape<PageArgs, Row>();
  /** A row read again unchanged gives the same record, which the route renders once (record-versions.ts). */
  private readonly versions = new RecordVersions();

  constructor(store: Db) {
    this.db = store.kysely;
    this.batchedCounters = store.dialect === 'postgres' ? countersBatcher(this.db) : null;
    this.batchedPages = store.dialect === 'postgres' ? new BatchedListPages(this.db) : null;
  }

  async list(q: ListQuery): Promise<FileRecord[]> {
    const rows = (q.tags ?? []).length === 0 ? (await this.untaggedPage(q)(this.db, q.projectId, q.afterUs, q.beforeUs)).rows : await this.taggedPage(q);
    return this.inDisplayOrder(q, rows);
  }

  /**
   * A page and the list's `total` and `totals`. On PostgreSQL an untagged page and its project's
   * counters are one statement, shared with the other pages asked for in the same turn
   * (batched/repo.ts); otherwise the page, then the counters, as `list` and `countAndTotals` read them.
   */
  async listWithTotals(q: ListQuery): Promise<CountedList> {
    const { projectId, afterUs, beforeUs } = q;
    const batched = (q.tags ?? []).length === 0 ? this.batchedPages?.read(shapeOf(q), { projectId, afterUs, beforeUs }) : null;
    if (!batched) {
      const records = await this.list(q);
      return { records, ...(await this.countAndTotals(q)) };
    }
    const { rows, counts } = await batched;
    return { records: this.inDisplayOrder(q, rows), total: await this.totalFrom(counts, q), totals: totalsOf(counts) };
  }

  private untaggedPage(q: ListQuery): PageQuery {
    const { removed, stored, desc, afterUs, beforeUs, limit } = q;
    return this.pageQueries.of(`${removed}:${stored}:${desc}:${afterUs !== null}:${beforeUs !== null}:${limit}`, (db, projectId, after, before) =>
      this.pageOf(db, { projectId, removed, stored, desc, afterUs: afterUs === null ? null : after, beforeUs: beforeUs === null ? null : before, limit }),
    );
  }

  private async taggedPage(q: ListQuery): Promise<Row[]> {
    return (await this.db.executeQuery(this.pageOf(this.db, q).compile())).rows;
  }

  private pageOf(db: DbOrTrx, q: ListQuery) {
    let s = db.selectFrom('files').selectAll().where('project_id', '=', q.projectId);
    s = q.removed ? s.where('removed_us', 'is not', null) : s.where('removed_us', 'is', null);
    if (q.stored === true) s = s.where('stored_us', 'is not', null);
    if (q.stored === false) s = s.where('stored_us', 'is', null);
    for (const tag of q.tags ?? []) {
      s = s.where('uuid', 'in', (eb) => eb.selectFrom('file_tags').select('uuid').where('project_id', '=', q.projectId).where('tag', '=', tag));
    }
    if (q.afterUs !== null) s = s.where('uploaded_us', q.desc ? '<' : '>', q.afterUs);
    if (q.beforeUs !== null) s = s.where('uploaded_us', q.desc ? '>' : '<', q.beforeUs);
    const backwards = q.beforeUs !== null && q.afterUs === null;
    const desc = backwards ? !q.desc : q.desc;
    return s.orderBy('uploaded_us', desc ? 'desc' : 'asc').limit(literalLimit(q.limit));
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
    const rows = await s.orderBy('size', dir).orderBy('uploaded_us', dir).limit(literalLimit(q.limit)).execute();
    const records = rows.map((r) => this.versions.of(r));
    return backwards ? records.reverse() : records;
  }

  /**
   * The list's `total`. Without a tag filter the counters answer it (removed; live, stored,
   * unstored: db/project-counters.ts), removed files by stored time with the help of an index of the
   * removed files that keep one (imports); a tag filter is counted from file_tags' key.
   */
  async count(q: CountQuery): Promise<number> {
    if ((q.tags ?? []).length > 0) return this.countTagged(q, q.tags!);
    return this.totalFrom(await this.counters(q.projectId), q);
  }

  /** `total` and `totals` together: the counters read once for both. */
  async countAndTotals(q: CountQuery): Promise<{ total: number; totals: FileTotals }> {
    const tagged = (q.tags ?? []).length > 0;
    const [c, taggedTotal] = await Promise.all([this.counters(q.projectId), tagged ? this.countTagged(q, q.tags!) : null]);
    return { total: taggedTotal ?? (await this.totalFrom(c, q)), totals: totalsOf(c) };
  }

  private counters(projectId: number): Promise<ProjectCounts> {
    return this.batchedCounters ? this.batchedCounters.get(projectId).then((c) => c!) : readCounters(this.db, projectId);
  }

  private async totalFrom(c: ProjectCounts, q: CountQuery): Promise<number> {
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

  /** A `previous` page walks backwards from its cursor: its rows flipped back into display order. */
  private inDisplayOrder(q: ListQuery, rows: readonly FileRow[]): FileRecord[] {
    const records = rows.map((r) => this.versions.of(r));
    return q.beforeUs !== null && q.afterUs === null ? records.reverse() : records;
  }

  /** The list's `totals`: one read of the project's counters. */
  async totals(projectId: number): Promise<FileTotals> {
    return totalsOf(await this.counters(projectId));
  }
}

function totalsOf({ removed, stored, unstored }: ProjectCounts): FileTotals {
  return { removed, stored, unstored };
}

/** What decides an untagged page's SQL besides its project and cursors (batched/repo.ts). */
function shapeOf(q: ListQuery): PageShape {
  return { removed: q.removed, stored: q.stored, desc: q.desc, after: q.afterUs !== null, before: q.beforeUs !== null, limit: q.limit };
}
