/**
 * A stamp of the SQLite store's data as this node sees it, for caches of rows (files/record-cache.ts):
 * if two stamps are equal, no row of any table changed between the two readings, whoever wrote it.
 *
 * It is SQLite's own pair of counters, read in one statement on the node's connection:
 *   - `total_changes()`: rows inserted, updated or deleted by this connection since it opened,
 *     counted when each statement completes, inside a transaction too (before its commit), and
 *     including rows changed by triggers and foreign-key actions. Every write of this node goes
 *     through this one connection.
 *   - `data_version`: moves when another connection (another process on the same file: a second
 *     node, a CLI command) has committed since this connection last looked.
 * Both only grow, so a stamp never comes back to an earlier value.
 *
 * The statement runs directly on the connection, without waiting for Kysely's hold of it: a
 * transaction another request holds open may be under way. That is sound: its changes are counted
 * as each statement completes, so a stamp read while it is open differs from any read before its
 * first change; a cache that then misses reads the row through Kysely, which waits for the
 * transaction to end. A rolled-back change leaves the count moved: a needless miss, never a stale hit.
 *
 * Cost: about 2-4 µs (a read transaction's shared-memory lock), against the 30-40 µs a file row
 * costs through Kysely and the driver (docs/performance.md).
 */
import type SQLite from 'better-sqlite3';

export function sqliteChangeStamp(file: SQLite.Database): () => string | null {
  // Two statements: as one (`… from pragma_data_version`) SQLite prepares the pragma again on
  // every run, which cost more than the two together.
  const version = file.prepare('pragma data_version').pluck(true);
  const changes = file.prepare('select total_changes()').pluck(true);
  return () => {
    try {
      return `${changes.get() as number}:${version.get() as number}`;
    } catch {
      // Busy or closed: no stamp, so the caller reads the row itself.
      return null;
    }
  };
}
