/**
 * Where a store registers how a reusable query (reusable-query.ts) may run a statement straight on
 * the connection one of its transactions holds, apart from both so that the store's setup
 * (connect.ts) and the queries reach it without importing each other.
 */
import type { DialectAdapter, QueryResult } from 'kysely';

/**
 * A store that can run a statement straight on the connection a transaction holds (SQLite: one
 * connection in this process, and a statement is a synchronous call). Kysely's way there, per
 * statement, is a query executor made for it, five nested async functions and the promises they
 * make: about 3.5 KB of garbage and 1-4 µs per statement, more than SQLite's insert of a row into
 * a small table. A new upload runs three such statements (its file row, content row and counters).
 * A direct run happens when it is called, where Kysely would queue it behind a statement of the
 * same transaction still under way: the statements of a transaction are awaited one by one.
 */
export interface DirectRunner {
  /** The open transaction's number (each BEGIN takes the next one), or null outside a transaction. */
  transaction(): number | null;
  /** Runs a statement in the open transaction, with Kysely's result. */
  run(sql: string, parameters: readonly unknown[]): QueryResult<unknown>;
}

const directRunners = new WeakMap<DialectAdapter, DirectRunner>();

/** Lets reusable queries in transactions on this store's adapter run on the connection directly. */
export function runDirectlyInTransactions(adapter: DialectAdapter, runner: DirectRunner): void {
  directRunners.set(adapter, runner);
}

/** The direct runner of this store's adapter, if it registered one. */
export function directRunnerOf(adapter: DialectAdapter): DirectRunner | undefined {
  return directRunners.get(adapter);
}
