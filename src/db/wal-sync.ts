/**
 * Durable SQLite commits without blocking the event loop. With `synchronous = FULL` every COMMIT
 * fsyncs the write-ahead log inside better-sqlite3, which is synchronous: the whole node waited for
 * the disk once per transaction (about a third of an upload's time on the main thread, and most
 * of a webhook burst's). Instead the store runs with `synchronous = NORMAL` (a commit writes its
 * WAL frames but does not sync them; SQLite still syncs around checkpoints) and the driver, once
 * it has released the connection, waits for an fdatasync of the WAL file on libuv's thread pool
 * before the query's caller goes on. So a write is still durable when its promise resolves,
 * while other queries run meanwhile; and every commit made while one sync runs shares the next
 * (a group commit by construction).
 */
import fs from 'node:fs';

export class WalSync {
  private fd: number | null = null;
  private inFlight: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly walPath: string) {}

  /**
   * Resolves once everything written to the WAL before this call is on disk: the sync running now
   * may have started before those writes, so a caller arriving during one waits for the next,
   * shared by all who arrive meanwhile.
   */
  sync(): Promise<void> {
    if (this.queued) return this.queued;
    if (this.inFlight) {
      const after = () => {
        this.queued = null;
        return this.start();
      };
      this.queued = this.inFlight.then(after, after);
      return this.queued;
    }
    return this.start();
  }

  /**
   * For writers that wait for a sync anyway: the sync running now when none is queued behind it,
   * else null. A commit made while it runs is made durable only by the next sync, which starts
   * when it ends: committed after it, the same writes share that next sync and their transaction
   * with whoever else arrived meanwhile. With a sync queued, a commit now joins that one.
   */
  turn(): Promise<void> | null {
    return this.queued ? null : this.inFlight;
  }

  /** After the database has closed: lets the syncs under way finish, then closes the file. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([this.inFlight, this.queued]);
    const fd = this.fd;
    this.fd = null;
    if (fd !== null) await new Promise<void>((resolve) => fs.close(fd, () => resolve()));
  }

  private start(): Promise<void> {
    const run = this.fdatasync().finally(() => {
      if (this.inFlight === run) this.inFlight = null;
    });
    this.inFlight = run;
    return run;
  }

  private async fdatasync(): Promise<void> {
    const fd = await this.open();
    // No WAL file yet means nothing was ever written to it.
    if (fd === null) return;
    await new Promise<void>((resolve, reject) => fs.fdatasync(fd, (err) => (err ? reject(stopNode(err)) : resolve())));
  }

  /**
   * The WAL file, opened once: SQLite keeps the same file (it rewinds or truncates it, never
   * replaces it) while a connection is open, and fsync applies to the file, not to a descriptor.
   */
  private async open(): Promise<number | null> {
    if (this.fd !== null || this.closed) return this.fd;
    try {
      const fd = await new Promise<number>((resolve, reject) => fs.open(this.walPath, 'r', (err, n) => (err ? reject(err) : resolve(n))));
      if (this.fd !== null || this.closed) fs.close(fd, () => undefined);
      else this.fd = fd;
      return this.fd;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }
}

/**
 * A failed sync of the WAL stops the node, as PostgreSQL does by default: Linux reports a writeback
 * error once and may drop the pages it could not write, so no later successful sync would prove
 * the commits are on disk, and the callers (whose transactions did commit) must not take the
 * failure for a rollback and write again. A restart recovers the database from what the WAL on
 * disk holds.
 */
function stopNode(err: NodeJS.ErrnoException): Error {
  const fatal = new Error(`SQLite: syncing the write-ahead log failed (${err.code ?? err.message}); stopping so that nothing is taken as durable that may not be`);
  process.nextTick(() => {
    throw fatal;
  });
  return fatal;
}
