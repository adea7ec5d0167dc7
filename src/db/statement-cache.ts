/**
 * Prepared statements kept per SQL text for SQLite. Kysely's SQLite driver prepares every query
 * afresh (better-sqlite3's prepare() compiles the SQL each time): in the profile of a signed
 * `GET /files/{uuid}/` that compile was the largest single cost (docs/performance.md). Queries
 * run one at a time on the driver's single connection, so one statement per text is never used by
 * two queries at once, except by a streamed query (iterate) left open, which would make the next
 * use of its statement fail: nothing here streams, and statements that are busy are not reused.
 * SQLite re-prepares a cached statement by itself when a migration changes the schema.
 */
import type SQLite from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/** Distinct texts are few (queries are built from fixed shapes); `in (?, ?, …)` lists vary by length. */
export const STATEMENT_CACHE_SIZE = 500;

/**
 * `onWrite` is called whenever a statement that may change the database is handed out: Kysely's
 * driver prepares each query just before running it, so that is when it runs (wal-sync.ts).
 */
export function cachingDatabase(file: SQLite.Database, onWrite: () => void = () => undefined, size = STATEMENT_CACHE_SIZE): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  const handOut = (stmt: SQLite.Statement): SQLite.Statement => {
    // BEGIN and COMMIT count as read-only: a transaction is a write by the statements inside it.
    if (!stmt.readonly) onWrite();
    return stmt;
  };
  return {
    close: () => {
      cache.clear();
      file.close();
    },
    prepare(sql: string): SqliteStatement {
      const hit = cache.get(sql);
      if (hit && !hit.busy) {
        // Most recently used last: the oldest entry is the first the map iterates.
        cache.delete(sql);
        cache.set(sql, hit);
        return handOut(hit);
      }
      const stmt = file.prepare(sql);
      if (!hit) {
        cache.set(sql, stmt);
        if (cache.size > size) cache.delete(cache.keys().next().value as string);
      }
      return handOut(stmt);
    },
  };
}
