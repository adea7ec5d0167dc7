/**
 * SQLite's trigram index of file text (`files_text`), written in batches (migration 0022): a new
 * file's row lists it in `files_text_pending`, and this moves every pending file into the index in
 * one transaction, a short while after uploads (so a busy node writes the index's fixed pages once
 * per batch, not once per upload) and before every search (so a search sees every committed file).
 * Any node may run it: it works from the pending list in the store, whoever wrote it, and a list
 * left by a crash is indexed by the next run. PostgreSQL has nothing pending (its trigram indexes
 * are ordinary indexes): every method is then a no-op.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';

/** How long new files wait for others to share their index write. */
export const TEXT_INDEX_DELAY_MS = 200;

export class DeferredTextIndex {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(private readonly store: Db) {}

  /** After a new file's commit: index it with whatever else is pending, within TEXT_INDEX_DELAY_MS. */
  soon(): void {
    if (this.store.dialect !== 'sqlite' || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      // In the background: a failure (the store closing) leaves the files pending for the next run.
      this.flush().catch(() => undefined);
    }, TEXT_INDEX_DELAY_MS);
    this.timer.unref();
  }

  /** Resolves once every file committed before the call is in the index. */
  async flush(): Promise<void> {
    if (this.store.dialect !== 'sqlite') return;
    // A run under way may have read the pending list before the caller's files were committed.
    if (this.running) await this.running.catch(() => undefined);
    const db = this.store.kysely;
    const pending = await sql<{ id: number }>`select id from files_text_pending limit 1`.execute(db);
    if (pending.rows.length === 0) return;
    this.running = this.store.transaction(async (trx) => {
      await sql`insert into files_text (rowid, original_filename, detected_mime, metadata)
        select k.id, f.original_filename, coalesce(f.detected_mime, ''), f.metadata
        from files_text_pending p join files_text_keys k on k.id = p.id join files f on f.uuid = k.uuid`.execute(trx);
      await sql`delete from files_text_pending`.execute(trx);
    });
    try {
      await this.running;
    } finally {
      this.running = null;
    }
  }

  /** Stops the timer (the store is closing); pending files stay listed for the next node. */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
