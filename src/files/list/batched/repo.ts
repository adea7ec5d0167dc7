/**
 * PostgreSQL: a page of the untagged upload-time file list and its project's counters (`total`,
 * `totals`) in one statement, and the pages asked for during one turn of the event loop in the same
 * statement (db/read-batcher.ts): one round trip for every list request of a turn, where each
 * request took two (its page, then the counters, those batched on their own).
 *
 * Why: on PostgreSQL a statement's cost to this node is mostly the pg client's socket write, which
 * wakes a server backend, and the client's per-statement work (its row description, the Result);
 * the file list's page was one of those per request, most of the list's CPU beyond a bare route
 * (docs/performance.md).
 *
 * Freshness is the read batcher's: a page joins only a statement sent after it was asked for, so it
 * is never older than a lone read made then (a write committed before the request is seen). Page
 * and counters come from one statement's snapshot, so they agree with each other.
 *
 * Pages are batched per shape (filters, order, which cursors are set, the LIMIT), each shape's
 * statement written once; a shape's pages differ only by project and cursors, passed as arrays.
 */
import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from '../../../db/schema.js';
import { ReadBatcher, type ReadBatchStats } from '../../../db/read-batcher.js';
import { countsOf, type CountColumns, type ProjectCounts } from '../../../db/project-counters.js';
import type { FileRow } from '../../file-row.js';

/** What decides a page's SQL besides its project and cursors. */
export interface PageShape {
  removed: boolean;
  stored: boolean | null;
  desc: boolean;
  /** Whether `afterUs` / `beforeUs` are set (their values are arguments). */
  after: boolean;
  before: boolean;
  limit: number;
}

/** One page's arguments within its shape. */
export interface PageArgs {
  projectId: number;
  afterUs: number | null;
  beforeUs: number | null;
}

/** A page's rows in the order the statement walked them, and its project's counters. */
export interface CountedPage {
  rows: FileRow[];
  counts: ProjectCounts;
}

/**
 * A row of the statement: the page's index in the batch (from 1), its project's counters, and a
 * file of the page, or no file (an empty page's one row; counters null for a project nothing was
 * counted in yet).
 */
type PagesRow = { page_index: number } & CountColumns & (FileRow | { uuid: null });

export class BatchedListPages {
  private readonly byShape = new Map<string, ReadBatcher<string, CountedPage>>();
  /** Counts over every shape since the node started (the node's metrics). */
  readonly stats: ReadBatchStats = { asked: 0, batches: 0 };

  /** Past `maxShapes` shapes (limits a client picks), `read` answers null: the caller reads alone. */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly maxShapes = 256,
  ) {}

  /** The page and its project's counters; null when this shape is not batched (see the constructor). */
  read(shape: PageShape, args: PageArgs): Promise<CountedPage> | null {
    const batcher = this.batcherOf(shape);
    if (batcher === null) return null;
    this.stats.asked++;
    return batcher.get(keyOf(args)).then((page) => page!);
  }

  private batcherOf(shape: PageShape): ReadBatcher<string, CountedPage> | null {
    const name = `${shape.removed}:${shape.stored}:${shape.desc}:${shape.after}:${shape.before}:${shape.limit}`;
    let batcher = this.byShape.get(name);
    if (batcher !== undefined) return batcher;
    if (this.byShape.size >= this.maxShapes) return null;
    const text = pagesStatement(shape);
    batcher = new ReadBatcher((keys) => this.readPages(text, keys));
    this.byShape.set(name, batcher);
    return batcher;
  }

  private async readPages(text: string, keys: readonly string[]): Promise<Map<string, CountedPage>> {
    this.stats.batches++;
    const args = keys.map(argsOf);
    const parameters = [args.map((a) => a.projectId), args.map((a) => a.afterUs), args.map((a) => a.beforeUs)];
    const { rows } = await this.db.executeQuery<PagesRow>(CompiledQuery.raw(text, parameters));
    const pages = keys.map((): CountedPage | null => null);
    for (const r of rows) {
      const page = (pages[r.page_index - 1] ??= { rows: [], counts: countsOf(r) });
      if (r.uuid !== null) page.rows.push(r);
    }
    return new Map(keys.map((k, i) => [k, pages[i]!]));
  }
}

/**
 * The statement of one shape: each page's arguments as a row of `q`, its project's counters joined
 * (none yet: nulls, read as zeros), its files by a lateral subquery that walks the same index as a
 * lone page query, and an empty page still a row (LEFT JOIN … ON true). Rows come out by page, each
 * page in its walking order.
 */
function pagesStatement(s: PageShape): string {
  if (!Number.isSafeInteger(s.limit) || s.limit < 0) throw new Error(`not a row limit: ${s.limit}`);
  const where = ['f.project_id = q.project_id', s.removed ? 'f.removed_us IS NOT NULL' : 'f.removed_us IS NULL'];
  if (s.stored === true) where.push('f.stored_us IS NOT NULL');
  if (s.stored === false) where.push('f.stored_us IS NULL');
  if (s.after) where.push(`f.uploaded_us ${s.desc ? '<' : '>'} q.after_us`);
  if (s.before) where.push(`f.uploaded_us ${s.desc ? '>' : '<'} q.before_us`);
  // A `previous` page walks backwards from its cursor (the caller flips it into display order).
  const backwards = s.before && !s.after;
  const dir = (backwards ? !s.desc : s.desc) ? 'DESC' : 'ASC';
  return [
    'SELECT q.i AS page_index, c.removed_files, c.stored_files, c.unstored_files, c.groups_count, p.*',
    'FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) WITH ORDINALITY AS q(project_id, after_us, before_us, i)',
    'LEFT JOIN project_counters c ON c.project_id = q.project_id',
    `LEFT JOIN LATERAL (SELECT * FROM files f WHERE ${where.join(' AND ')} ORDER BY f.uploaded_us ${dir} LIMIT ${s.limit}) p ON true`,
    `ORDER BY q.i, p.uploaded_us ${dir}`,
  ].join(' ');
}

/** A page's key in its shape's batcher: equal pages asked for together share one read. */
function keyOf(a: PageArgs): string {
  return `${a.projectId} ${a.afterUs ?? ''} ${a.beforeUs ?? ''}`;
}

function argsOf(key: string): PageArgs {
  const [projectId, afterUs, beforeUs] = key.split(' ') as [string, string, string];
  return { projectId: Number(projectId), afterUs: afterUs === '' ? null : Number(afterUs), beforeUs: beforeUs === '' ? null : Number(beforeUs) };
}
