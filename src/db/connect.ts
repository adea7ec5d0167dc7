/**
 * Opens the metadata store: SQLite (WAL, in the data dir) by default, PostgreSQL when the config
 * names a postgres:// URL. Everything above this file is dialect-agnostic Kysely, and only the
 * repositories (src/db/*, each feature's repo.ts, the job queue) hold queries: services see a
 * `Db` to open transactions with and pass the transaction handle on to repositories and `enqueue`.
 */
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect, SqliteDriver, sql, type DatabaseConnection, type DatabaseIntrospector, type DialectAdapter, type Driver, type QueryResult, type SqliteDatabase, type SqliteDialectConfig, type Transaction } from 'kysely';
import { OwnSchemaIntrospector } from './own-schema-introspector.js';
import type { Database } from './schema.js';
import { cachingDatabase } from './statement-cache.js';
import { runDirectlyInTransactions } from './direct-runs.js';
import { sqliteChangeStamp } from './change-stamp.js';
import { WalSync } from './wal-sync.js';
import { DEFAULTS } from '../config/defaults.js';
import { connectionSettings } from './pg-connection.js';
import { AloneNode, backendPid, countWrites, joinAsWriter, lockKeyOf, type AloneTimings } from './pg-alone.js';

export type Dialect = 'sqlite' | 'postgres';

/** An open transaction: what a service hands to repositories and `enqueue` so they commit together. */
export type Trx = Transaction<Database>;

/** What a repository query runs on: the pool, or a transaction a service opened. */
export type DbOrTrx = Kysely<Database> | Trx;

export interface Db {
  /** The query builder. Only repositories use it (test/architecture.test.ts keeps it so). */
  kysely: Kysely<Database>;
  dialect: Dialect;
  /** PostgreSQL schema in use, when not the default. */
  schema?: string;
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. A state
   * change and the jobs it causes are written through the same `trx` (outbox, DESIGN invariant 2).
   */
  transaction<T>(fn: (trx: Trx) => Promise<T>): Promise<T>;
  /** One round trip to the store (readiness probe). */
  ping(): Promise<void>;
  /**
   * A stamp of the data this node can see, read without waiting for the connection: equal stamps
   * mean no row changed in between (db/change-stamp.ts says why). Null when the store cannot
   * tell without a round trip (PostgreSQL, unless this node is its schema's only writer:
   * pg-alone.ts): then nothing may be served from a cache of rows.
   */
  changeStamp(): string | null;
  /**
   * PostgreSQL only: this node caches rows while it is the schema's only writer (pg-alone.ts), and
   * stops before another process writes. Started by `serve`; admin commands only join as writers.
   */
  cacheWhileAlone?(onChange?: (alone: boolean) => void): Promise<void>;
  /**
   * SQLite only (absent on PostgreSQL, whose commit is durable when it returns). Called while
   * holding the connection (inside a transaction, or `kysely.connection().execute`): this hold's
   * writes are handed back once committed, without waiting for the WAL sync that makes them
   * durable (wal-sync.ts); the caller then waits on `synced` where it needs that. For the group
   * commit: its next batch starts meanwhile, and a write a crash may undo (a job's claim) is
   * answered at once.
   */
  leaveSyncToCaller?(): void;
  /** SQLite only: resolves once every commit made so far is on disk. */
  synced?(): Promise<void>;
  /**
   * SQLite only: the WAL sync a commit made now would wait to see end before its own began
   * (wal-sync.ts `turn`), or null when a commit now waits for no more than one sync.
   */
  syncTurn?(): Promise<void> | null;
  close(): Promise<void>;
}

/** The pg driver, loaded only when a PostgreSQL URL is configured (a SQLite node never pays for it). */
async function loadPg(): Promise<typeof import('pg').default> {
  const pg = (await import('pg')).default;
  // int8 (bigint) columns hold microsecond times and sizes, all far below 2^53: read them as numbers.
  pg.types.setTypeParser(20, (v) => Number(v));
  return pg;
}

export interface DbOptions {
  databaseUrl: string;
  dataDir: string;
  /** PostgreSQL schema to use (created if missing); lets tests and tenants share one database. */
  schema?: string;
  /** PostgreSQL: connections the pool may hold (default: the setting's). */
  poolMax?: number;
  /** PostgreSQL: the alone node's timings (tests shorten them). */
  aloneTimings?: AloneTimings;
}

/** The store options of a node's settings (`serve` and `doctor` open the same store). */
export function dbOptionsFrom(settings: { databaseUrl: string; dataDir: string; databaseSchema?: string | undefined; databasePoolMax: number }): DbOptions {
  return {
    databaseUrl: settings.databaseUrl,
    dataDir: settings.dataDir,
    poolMax: settings.databasePoolMax,
    ...(settings.databaseSchema ? { schema: settings.databaseSchema } : {}),
  };
}

/** The SQLite store's file in a data dir. */
export const sqliteFile = (dataDir: string): string => path.join(dataDir, 'stowage.sqlite');

export async function openDb(opts: DbOptions): Promise<Db> {
  if (opts.databaseUrl) return openPostgres(opts);
  fs.mkdirSync(opts.dataDir, { recursive: true });
  const file = new SQLite(sqliteFile(opts.dataDir));
  file.pragma('journal_mode = WAL');
  // Each write is still durable before its caller goes on (an acknowledged upload's row survives a
  // power cut): the driver syncs the WAL itself, off the event loop, once the connection is free
  // (wal-sync.ts). NORMAL keeps SQLite from doing that sync again, synchronously, at every COMMIT.
  file.pragma('synchronous = NORMAL');
  // A checkpoint runs inside the COMMIT that crosses the threshold, on the main thread: two fsyncs
  // (the WAL's, the database's) the event loop waits for, and a copy of every page changed since
  // the last one. Every 4,000 pages (16 MiB of WAL at most between two) instead of SQLite's 1,000:
  // a quarter of those stalls, and the pages an upload rewrites each time (the right edge of the
  // time-ordered indexes, the counters row, the search queue) copied once per checkpoint.
  file.pragma('wal_autocheckpoint = 4000');
  file.pragma('busy_timeout = 10000');
  file.pragma('foreign_keys = ON');
  // Statement journals and the small temporary b-trees of IN lists and sorts stay in memory: on
  // disk each was a file created, written and unlinked on the main thread (SQLite is synchronous),
  // most uploads making one. The app's queries are paged and indexed, so these stay small.
  file.pragma('temp_store = MEMORY');
  const wal = new WalSync(`${file.name}-wal`);
  const dialect = new ImmediateSqliteDialect(file, wal);
  const db = wrap(new Kysely<Database>({ dialect }), 'sqlite');
  const stamp = sqliteChangeStamp(file);
  return {
    ...db,
    changeStamp: stamp.read,
    leaveSyncToCaller: () => dialect.skipSyncOnRelease(),
    synced: () => wal.sync(),
    syncTurn: () => wal.turn(),
    close: async () => {
      await db.close();
      stamp.close();
      await wal.close();
    },
  };
}

async function openPostgres({ databaseUrl: url, schema, poolMax = DEFAULTS.databasePoolMax, aloneTimings }: DbOptions): Promise<Db> {
  if (schema && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid PostgreSQL schema name: ${schema}`);
  const pg = await loadPg();
  if (schema) {
    const admin = new pg.Client(connectionSettings(url, undefined));
    await admin.connect();
    try {
      await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    } catch (err) {
      // Two processes creating the same schema at once race on the catalog; the loser can go on.
      if ((err as { code?: string }).code !== '23505') throw err;
    } finally {
      await admin.end();
    }
  }
  const settings = connectionSettings(url, schema);
  const pool = new pg.Pool({ ...settings, max: poolMax });
  // Every pool connection may write: its writes move this node's stamp, and it joins as a writer
  // (pg-alone.ts) before its first statement, so no other node caches while it can write.
  const key = lockKeyOf(schema);
  const ownPids = new Set<number>();
  let writes = 0;
  let alone: AloneNode | null = null;
  pool.on('connect', (client) => {
    const pid = backendPid(client);
    if (pid !== undefined) ownPids.add(pid);
    countWrites(client, () => writes++);
  });
  pool.on('remove', (client) => {
    const pid = backendPid(client);
    if (pid !== undefined) ownPids.delete(pid);
  });
  const dialect = new OwnSchemaPostgresDialect({
    pool,
    onCreateConnection: (connection) =>
      joinAsWriter(
        async (text, params) => ({ rows: (await connection.executeQuery<Record<string, unknown>>(CompiledQuery.raw(text, [...params]))).rows }),
        key,
        () => alone?.aloneSessionPid() ?? null,
      ),
  });
  const db = wrap(new Kysely<Database>({ dialect }), 'postgres');
  return {
    ...db,
    ...(schema ? { schema } : {}),
    // Only while alone (and its lease holds): then every change of any row went through `writes`.
    changeStamp: () => (alone?.trusted() ? `${alone.epoch}:${writes}` : null),
    cacheWhileAlone: async (onChange) => {
      if (alone) return;
      alone = new AloneNode({ client: () => new pg.Client(settings), key, ownPids, ...(aloneTimings ? { timings: aloneTimings } : {}), ...(onChange ? { onChange } : {}) });
      await alone.start();
    },
    close: async () => {
      // Its own connections end first: no write of this node can follow the end of its lease.
      await db.close();
      await alone?.close();
    },
  };
}

function wrap(kysely: Kysely<Database>, dialect: Dialect): Db {
  return {
    kysely,
    dialect,
    transaction: (fn) => kysely.transaction().execute(fn),
    ping: async () => {
      await sql`select 1`.execute(kysely);
    },
    changeStamp: () => null,
    close: () => kysely.destroy(),
  };
}

/**
 * Transactions that read then write must take the write lock up front: with SQLite's default
 * deferred BEGIN, a second process sharing the file (a CLI command, another node) makes the upgrade
 * fail at once with SQLITE_BUSY instead of waiting for busy_timeout.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  private readonly cfg: SqliteDialectConfig;

  /**
   * Whether the connection's current holder has run a statement that may write, and whether it
   * leaves the WAL sync to its caller (Db.leaveSyncToCaller).
   */
  private readonly writes: { pending: boolean; skipSync: boolean };

  constructor(
    private readonly file: SQLite.Database,
    private readonly wal: WalSync,
  ) {
    const writes = { pending: false, skipSync: false };
    // Statements are prepared once per SQL text (statement-cache.ts); writes are noted for the WAL sync.
    const cfg = { database: cachingDatabase(file, () => (writes.pending = true)) };
    super(cfg);
    this.cfg = cfg;
    this.writes = writes;
  }

  /** The connection's current holder syncs the WAL itself after it lets the connection go. */
  skipSyncOnRelease(): void {
    this.writes.skipSync = true;
  }

  /** Counts BEGINs: the open transaction's number (db/direct-runs.ts). */
  private begun = 0;

  override createAdapter(): DialectAdapter {
    const adapter = super.createAdapter();
    const { file } = this;
    const database = this.cfg.database as SqliteDatabase;
    runDirectlyInTransactions(adapter, {
      transaction: () => (file.inTransaction ? this.begun : null),
      run: (sqlText, parameters) => runOnConnection(database, sqlText, parameters),
    });
    return adapter;
  }

  override createDriver(): Driver {
    const { file, wal, writes } = this;
    const dialect = this;
    return new (class extends SqliteDriver {
      // A hold of the connection that wrote (an autocommit write, or a transaction with writes)
      // waits for the WAL sync after letting the connection go, so others query meanwhile.
      override async releaseConnection(): Promise<void> {
        const wrote = writes.pending && !file.inTransaction;
        if (wrote) writes.pending = false;
        const skipSync = writes.skipSync;
        writes.skipSync = false;
        await super.releaseConnection();
        if (wrote && !skipSync) await wal.sync();
      }

      override async beginTransaction(connection: DatabaseConnection): Promise<void> {
        dialect.begun++;
        await connection.executeQuery(CompiledQuery.raw('begin immediate'));
      }

      // SQLite rolls a transaction back by itself when a statement fails with SQLITE_FULL (or
      // IOERR, NOMEM...); the ROLLBACK that follows would then fail and replace that error with
      // "cannot rollback - no transaction is active" (a 500 instead of the full disk's 507).
      override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
        if (!file.inTransaction) return;
        await connection.executeQuery(CompiledQuery.raw('rollback'));
      }
    })(this.cfg);
  }
}

/** What Kysely's SQLite connection does with a compiled statement (its `executeQuery`), synchronously. */
function runOnConnection(database: SqliteDatabase, sqlText: string, parameters: readonly unknown[]): QueryResult<unknown> {
  const stmt = database.prepare(sqlText);
  if (stmt.reader) return { rows: stmt.all(parameters) };
  const { changes, lastInsertRowid } = stmt.run(parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

/** PostgreSQL, its introspection (the migrator's) limited to this node's schema (own-schema-introspector.ts). */
class OwnSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new OwnSchemaIntrospector(db, super.createIntrospector(db));
  }
}
