/**
 * A stamp of the SQLite store's data as this node sees it, for caches of rows (files/record-cache.ts):
 * if two stamps are equal, no row of any table changed between the two readings, whoever wrote it.
 *
 * It is two readings, both only growing or moving, so a stamp never comes back to an earlier value:
 *   - `total_changes()`: rows inserted, updated or deleted by this connection since it opened,
 *     counted when each statement completes, inside a transaction too (before its commit), and
 *     including rows changed by triggers and foreign-key actions. Every write of this node goes
 *     through this one connection.
 *   - the WAL-index header: the first 48 bytes of the `-shm` file (https://www.sqlite.org/walformat.html,
 *     "WAL-Index Header"), which every connection on the file, in any process (a second node, a
 *     CLI command), rewrites as the last step of each commit, with a change counter, the WAL's
 *     last frame, its salts and checksums; a reader of the database reads it the same way, so a
 *     commit whose COMMIT has returned has changed these bytes. Read with one `pread`. A header
 *     read while another connection rewrites it is either the old one (that commit has not
 *     finished) or a mix that differs from any earlier reading (a needless miss). When the file
 *     cannot be read, `PRAGMA data_version` stands in for it: it moves on the same commits of
 *     other connections, but opens a read transaction (a lock of the shared memory taken and
 *     dropped) and costs more than twice the `pread`.
 *
 * Both are read directly, without waiting for Kysely's hold of the connection: a transaction
 * another request holds open may be under way. That is sound: its changes are counted as each
 * statement completes, so a stamp read while it is open differs from any read before its first
 * change; a cache that then misses reads the row through Kysely, which waits for the transaction to
 * end. A rolled-back change leaves the count moved: a needless miss, never a stale hit.
 *
 * Cost: about 1-1.5 µs (the `pread` and a statement that reads no page), against the 30-40 µs a
 * file row costs through Kysely and the driver (docs/performance.md).
 */
import fs from 'node:fs';
import type SQLite from 'better-sqlite3';

export interface ChangeStamp {
  /** The stamp now; null when it cannot be read (busy, closed), so the caller reads the row itself. */
  read(): string | null;
  close(): void;
}

const HEADER_BYTES = 48;

export function sqliteChangeStamp(file: SQLite.Database): ChangeStamp {
  const changes = file.prepare('select total_changes()').pluck(true);
  const version = file.prepare('pragma data_version').pluck(true);
  const header = new WalIndexHeader(`${file.name}-shm`);
  return {
    read: () => {
      try {
        return `${changes.get() as number}:${header.read() ?? `v${version.get() as number}`}`;
      } catch {
        return null;
      }
    },
    close: () => header.close(),
  };
}

/** The WAL-index header as text (latin1: a character per byte), or null when the `-shm` file cannot be read. */
class WalIndexHeader {
  private fd: number | null = null;
  /** The file could not be opened: not tried again (each try would cost more than the pragma). */
  private unavailable = false;
  private readonly bytes = Buffer.alloc(HEADER_BYTES);

  constructor(private readonly path: string) {}

  read(): string | null {
    if (this.unavailable) return null;
    try {
      // Opened at the first reading: the file exists once this node's connection has read in WAL mode.
      this.fd ??= fs.openSync(this.path, 'r');
    } catch {
      this.unavailable = true;
      return null;
    }
    try {
      return fs.readSync(this.fd, this.bytes, 0, HEADER_BYTES, 0) === HEADER_BYTES ? this.bytes.toString('latin1') : null;
    } catch {
      return null;
    }
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}
