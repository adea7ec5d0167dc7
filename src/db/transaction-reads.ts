/**
 * Reads that a SQLite write transaction may make once: every transaction of the store begins with
 * BEGIN IMMEDIATE (connect.ts), which holds the database's write lock until it ends, so no other
 * connection or process can change anything the transaction read. The new files of a group
 * commit's batch (files/ingest.ts) share one transaction, and each asked the same two questions of
 * its project (which of its events have a webhook subscription, which add-ons run on upload): one
 * statement each per batch is enough on SQLite.
 *
 * Only for rows the transaction itself never writes (a file's transaction does not touch webhooks
 * or add-on settings). On PostgreSQL (read committed) a subscription committed by another
 * transaction is visible to the next statement, and autocommitted reads are not in a transaction
 * at all: both read every time.
 */
import { SqliteAdapter } from 'kysely';
import type { DbOrTrx } from './connect.js';

export class TransactionReads<V> {
  /** Per transaction object (each batch, and each rerun of a failed batch's writes, has its own). */
  private readonly byTransaction = new WeakMap<DbOrTrx, Map<string, Promise<V>>>();

  /**
   * `read()`'s answer, made once per `key` in a SQLite transaction; read each time anywhere else.
   * `key` must name everything the read depends on (its arguments).
   */
  async once(db: DbOrTrx, key: string, read: () => Promise<V>): Promise<V> {
    if (!db.isTransaction || !(db.getExecutor().adapter instanceof SqliteAdapter)) return read();
    let reads = this.byTransaction.get(db);
    if (!reads) {
      reads = new Map();
      this.byTransaction.set(db, reads);
    }
    let answer = reads.get(key);
    if (!answer) {
      answer = read();
      reads.set(key, answer);
      // A failed read is not remembered: the transaction fails with it, but do not keep the failure.
      answer.catch(() => reads.delete(key));
    }
    return answer;
  }
}
