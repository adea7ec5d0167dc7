/**
 * Group commit: small independent writes (a job's outcome, an attempt record) that arrive while a
 * transaction is committing are run together in the next transaction, so many writers share one
 * durable commit. On SQLite all writes share one connection and every transaction costs its
 * statements, BEGIN and COMMIT on the main thread (the WAL sync itself is shared, wal-sync.ts); on
 * PostgreSQL every commit is a round trip and a flush of the server's log.
 * A lone write waits one turn of the event loop, never for a batch to fill.
 *
 * A lone single-statement write (`statement`) runs without an explicit transaction: SQLite's
 * better-sqlite3 waits for a lock synchronously, so a transaction held open across an await could
 * stall a second connection of the same process (tests open several).
 *
 * Each write still resolves only after its transaction committed. If one write of a batch fails,
 * the batch's transaction rolls back and every write of it is run again alone, so only the
 * failing one fails (writes must therefore be safe to run twice until committed, as plain
 * inserts and fenced updates are).
 */
import type { Kysely, Transaction } from 'kysely';
import type { Db } from './connect.js';
import type { Database } from './schema.js';

type Write<T> = (trx: Transaction<Database>) => Promise<T>;
type Statement<T> = (db: Kysely<Database>) => Promise<T>;

interface Pending {
  write: Write<unknown>;
  /** Set for a single-statement write: it may run alone outside a transaction. */
  statement: Statement<unknown> | null;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

export class GroupCommit {
  private pending: Pending[] = [];
  private flushing = false;

  private readonly db: Kysely<Database>;

  constructor(
    store: Db,
    private readonly maxBatch = 256,
  ) {
    this.db = store.kysely;
  }

  /** Runs `write` in a transaction, shared with the writes that arrive meanwhile. */
  run<T>(write: Write<T>): Promise<T> {
    return this.push(write, null);
  }

  /** The same for a write of one statement. */
  statement<T>(write: Statement<T>): Promise<T> {
    return this.push(write, write);
  }

  private push<T>(write: Write<T>, statement: Statement<T> | null): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ write, statement, resolve: (v) => resolve(v as T), reject });
      if (this.flushing) return;
      this.flushing = true;
      // One turn of the event loop first: writes whose I/O is already done (answers that arrived
      // while SQLite, which blocks the thread, was committing) join this batch.
      setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, this.maxBatch);
        const lone = batch.length === 1 ? batch[0]!.statement : null;
        if (lone) {
          await lone(this.db).then(batch[0]!.resolve, batch[0]!.reject);
          continue;
        }
        try {
          const results = await this.db.transaction().execute(async (trx) => {
            const out: unknown[] = [];
            for (const p of batch) out.push(await p.write(trx));
            return out;
          });
          batch.forEach((p, i) => p.resolve(results[i]));
        } catch {
          for (const p of batch) {
            try {
              p.resolve(await this.db.transaction().execute(p.write));
            } catch (err) {
              p.reject(err);
            }
          }
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}
