/**
 * A query whose SQL is built and compiled once per store; each later run only swaps in its
 * arguments. Building a Kysely query (operation nodes, parsers, frozen objects) and compiling it
 * to SQL cost more CPU than SQLite's execution of a primary-key lookup or a row insert: hot paths
 * such as a file's info (`GET /files/{uuid}/`, the CDN's lookup) and a new upload's rows run the
 * same shapes over and over (docs/performance.md).
 *
 * The template is compiled from probe arguments (a distinct marker string per argument), so each
 * bound parameter's argument is known even when real arguments are equal or null (an upload's
 * `uploaded_us` and `stored_us`, its `removed_us`). `build` must give the same SQL whatever the
 * arguments' values and bind every argument as a parameter; a build that inlines one (the marker
 * shows up in the SQL) or binds something else is run uncompiled every time instead.
 *
 * Templates are kept per dialect adapter (one per store): the SQL text depends on the dialect, and
 * a function made at module level may serve a SQLite and a PostgreSQL store in one process.
 */
import { sql, type CompiledQuery, type Compilable, type DialectAdapter, type QueryResult, type RawBuilder } from 'kysely';
import type { DbOrTrx } from './connect.js';
import { directRunnerOf } from './direct-runs.js';

export type QueryArg = string | number | null;

interface Template<R> {
  compiled: CompiledQuery<R>;
  /** For each bound parameter, the index of the argument it takes. */
  from: number[];
}

export function reusableQuery<A extends readonly QueryArg[], R>(build: (db: DbOrTrx, ...args: A) => Compilable<R>): (db: DbOrTrx, ...args: A) => Promise<QueryResult<R>> {
  // null: this build cannot be a template (see templateOf).
  const templates = new WeakMap<DialectAdapter, Template<R> | null>();
  return async (db, ...args) => {
    const executor = db.getExecutor();
    const adapter = executor.adapter;
    let template = templates.get(adapter);
    if (template === undefined) {
      template = templateOf(db, build, args.length);
      templates.set(adapter, template);
    }
    if (!template) return db.executeQuery<R>(build(db, ...args).compile());
    const parameters = template.from.map((i) => args[i]);
    const direct = db.isTransaction && executor.plugins.length === 0 ? directRunnerOf(adapter) : undefined;
    if (direct && transactionsSeen.get(db) === direct.transaction()) return direct.run(template.compiled.sql, parameters) as QueryResult<R>;
    const result = await db.executeQuery<R>({ ...template.compiled, parameters });
    // Kysely ran it, so `db` is a transaction still open: the current one.
    const open = direct?.transaction() ?? null;
    if (open !== null) transactionsSeen.set(db, open);
    return result;
  };
}

/**
 * Which transaction each Kysely transaction object is, learned from a statement Kysely ran on it
 * (Kysely checks that the transaction is still open). A transaction object used after its end
 * is never taken for the next one: that one has another number, so Kysely runs (and refuses) it.
 */
const transactionsSeen = new WeakMap<DbOrTrx, number>();

function templateOf<A extends readonly QueryArg[], R>(db: DbOrTrx, build: (db: DbOrTrx, ...args: A) => Compilable<R>, count: number): Template<R> | null {
  const probes = Array.from({ length: count }, (_, i) => `\u0000reusable-query-probe-${i}\u0000`);
  let compiled: CompiledQuery<R>;
  try {
    // The probes only reach the compiler, never the store: their types do not matter there.
    compiled = build(db, ...(probes as unknown as A)).compile();
  } catch {
    return null;
  }
  const from = compiled.parameters.map((p) => (typeof p === 'string' ? probes.indexOf(p) : -1));
  if (from.some((i) => i < 0) || probes.some((p) => compiled.sql.includes(p))) return null;
  return { compiled, from };
}

/**
 * Reusable queries of one family whose SQL differs by a few flags (a list's filters, order, which
 * cursors are set, its LIMIT written as a literal): one reusable query per shape, made on first use.
 * `shape` must name everything the build's SQL depends on apart from its arguments. Past
 * `maxShapes` shapes (limits a client picks), a new shape's query is built and compiled per run.
 */
export class ReusableQueriesByShape<A extends readonly QueryArg[], R> {
  private readonly byShape = new Map<string, (db: DbOrTrx, ...args: A) => Promise<QueryResult<R>>>();

  constructor(private readonly maxShapes = 256) {}

  of(shape: string, build: (db: DbOrTrx, ...args: A) => Compilable<R>): (db: DbOrTrx, ...args: A) => Promise<QueryResult<R>> {
    let query = this.byShape.get(shape);
    if (query) return query;
    if (this.byShape.size >= this.maxShapes) return (db, ...args) => db.executeQuery<R>(build(db, ...args).compile());
    query = reusableQuery(build);
    this.byShape.set(shape, query);
    return query;
  }
}

/**
 * A LIMIT as a literal in the SQL: SQLite (built with STAT4, as better-sqlite3 is) marks a bound
 * LIMIT as able to change the plan, so every run of the statement re-prepares it (about 13 µs of a
 * file list's 20 µs query; docs/performance.md). Callers name the limit in the query's shape.
 */
export function literalLimit(limit: number): RawBuilder<number> {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new Error(`not a row limit: ${limit}`);
  return sql.lit(limit);
}

/**
 * A LIMIT that differs from run to run (a claim's free slots, a page size a client picks) as a
 * bound parameter that does not re-prepare the statement: SQLite reads a LIMIT's bound value while
 * planning only where the LIMIT is the bare parameter (literalLimit), so `(? + 0)` is evaluated
 * when run instead. With a literal, each value would be a SQL text of its own in the statement
 * cache; bare, the webhook burst's fair claim was planned again on every run (0.27 ms of SQLite's
 * time against 0.09). PostgreSQL plans an unnamed statement with its values, folding `$1 + 0`
 * into the constant, so its plans still see the limit.
 */
export function boundLimit(limit: number): RawBuilder<number> {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new Error(`not a row limit: ${limit}`);
  return sql<number>`(${limit} + 0)`;
}
