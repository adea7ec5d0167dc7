/**
 * A node that is the only writer of its PostgreSQL schema may cache rows, as a SQLite node does:
 * every change then goes through its own connections, so a stamp it keeps itself (`writes`,
 * counted as its statements finish) tells it whether any row changed. This file decides, with
 * PostgreSQL's advisory locks, when a node is alone, and makes every other writer wait until a
 * node that was alone has stopped trusting its cache.
 *
 * Two locks per schema (`lockKeyOf`):
 *   - WRITER (shared): every connection of every process that may write holds it from its first
 *     statement on (`joinAsWriter`, run on each new pool connection). It is released when that
 *     connection ends, and a connection's changes end with it.
 *   - ALONE (exclusive): held by the one node that caches, on a session of its own (`AloneNode`).
 *
 * Becoming alone: take ALONE, then look for WRITER held by any session that is not one of this
 * node's own pool connections; if there is one, give ALONE back. Joining as a writer: take
 * WRITER, then look for ALONE held by another process's session; if there is one, ask it by
 * NOTIFY to give it back and wait until it has. Each side takes its lock before it looks at the
 * other's, so of two that cross, at least one sees the other: a node never caches while another
 * process's connection can write.
 *
 * The node that is alone stops using its cache before it gives ALONE back (on a NOTIFY, on losing
 * its session). If its session is cut without it knowing (a network partition), PostgreSQL ends
 * the session after `idle_session_timeout`, which frees ALONE for the waiting writer; the node
 * trusts its cache only while its last heartbeat on that session began less than `leaseMs` ago,
 * and `leaseMs` is well below that timeout, so its cache is off before the other writes.
 *
 * Writers that do not join (psql by hand, an older Stowage) are not seen: `STOWAGE_PG_ROW_CACHE=0`
 * turns the cache off for deployments that have them.
 */
import type pg from 'pg';

const CHANNEL = 'stowage_alone_node';
const WRITER = 1;
const ALONE = 2;

export interface AloneTimings {
  /** A node alone checks its session this often. */
  heartbeatMs: number;
  /** A node that found another writer tries again after this (fewer lock scans in a cluster). */
  retryMs: number;
  /** The cache is trusted until this long after the last heartbeat that succeeded began. */
  leaseMs: number;
  /** PostgreSQL ends the node's silent session after this (frees ALONE after a partition). */
  idleSessionTimeoutMs: number;
  /** A writer that asked waits at most this long for ALONE before its connection fails. */
  joinTimeoutMs: number;
}

export const ALONE_TIMINGS: AloneTimings = { heartbeatMs: 500, retryMs: 2000, leaseMs: 1500, idleSessionTimeoutMs: 4000, joinTimeoutMs: 30_000 };

/** The schema's lock key (the first half of a two-part advisory key): a positive 31-bit hash. */
export function lockKeyOf(schema: string | undefined): number {
  let h = 0x811c9dc5;
  for (const ch of `stowage:${schema ?? ''}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193);
  return h & 0x7fffffff;
}

/** Runs one statement on a connection that is about to be used for writes. */
export type RunOne = (sql: string, params: readonly unknown[]) => Promise<{ rows: Array<Record<string, unknown>> }>;

const HOLDER_OF = `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND classid = $1::bigint::oid AND objsubid = 2`;

/**
 * Takes WRITER on a new connection; if another process's node is alone, asks it to stop and waits
 * until it has. `ownAloneSession` is this process's own ALONE session, if any (it need not yield
 * to itself: its cache sees its own writes).
 */
export async function joinAsWriter(run: RunOne, key: number, ownAloneSession: () => number | null, timeoutMs = ALONE_TIMINGS.joinTimeoutMs): Promise<void> {
  await run('SELECT pg_advisory_lock_shared($1, $2)', [key, WRITER]);
  const { rows } = await run(`${HOLDER_OF} AND objid = ${ALONE} AND mode = 'ExclusiveLock'`, [key]);
  const holder = rows[0]?.['pid'];
  if (holder === undefined || holder === ownAloneSession()) return;
  await run('SELECT pg_notify($1, $2)', [CHANNEL, String(key)]);
  // Granted once the node alone gives ALONE back (it stopped trusting its cache first).
  await run('BEGIN', []);
  try {
    await run(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(timeoutMs))}`, []);
    await run('SELECT pg_advisory_xact_lock_shared($1, $2)', [key, ALONE]);
    await run('COMMIT', []);
  } catch (err) {
    await run('ROLLBACK', []).catch(() => undefined);
    throw err;
  }
}

export interface AloneNodeOptions {
  /** A fresh client on the schema (search_path set), not yet connected. */
  client: () => pg.Client;
  key: number;
  /** Backend pids of this node's own pool connections (its own WRITER holders). */
  ownPids: ReadonlySet<number>;
  timings?: AloneTimings;
  onChange?: (alone: boolean) => void;
}

/**
 * The node's ALONE session: tries to become alone, keeps its lease while it is, and yields when a
 * writer asks. `trusted()` says whether a cache of rows may answer now.
 */
export class AloneNode {
  private session: pg.Client | null = null;
  private sessionPid: number | null = null;
  private alone = false;
  private leaseFrom = 0;
  private timer: NodeJS.Timeout | null = null;
  private busy = false;
  private closed = false;
  /** A writer asked while this node was taking ALONE: it must not become alone on that try. */
  private askedWhileTrying = false;
  private trying = false;
  private nextTry = 0;
  /** Moves each time the node becomes alone: entries cached before are never trusted again. */
  epoch = 0;
  private readonly timings: AloneTimings;

  constructor(private readonly opts: AloneNodeOptions) {
    this.timings = opts.timings ?? ALONE_TIMINGS;
  }

  /** Starts the session and its timer; resolves after the first try (alone or not). */
  async start(): Promise<void> {
    await this.tick();
    this.timer = setInterval(() => void this.tick(), this.timings.heartbeatMs);
    this.timer.unref();
  }

  /** Whether this node is alone and its lease holds: only then may a cache of rows answer. */
  trusted(): boolean {
    return this.alone && performance.now() - this.leaseFrom < this.timings.leaseMs;
  }

  /** This node's ALONE session's backend pid (its own new connections need not ask it to yield). */
  aloneSessionPid(): number | null {
    return this.alone ? this.sessionPid : null;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.setAlone(false);
    if (this.timer) clearInterval(this.timer);
    const s = this.session;
    this.session = null;
    await s?.end().catch(() => undefined);
  }

  private async tick(): Promise<void> {
    if (this.busy || this.closed) return;
    this.busy = true;
    try {
      const session = this.session ?? (await this.open());
      if (this.closed) {
        // Closed while the session was opening: it must not keep the process alive.
        this.lost(session);
        return;
      }
      if (this.alone) await this.heartbeat(session);
      else if (performance.now() >= this.nextTry) await this.tryAlone(session);
    } catch {
      // The session failed: not alone any more (lost() ran); the next tick opens a new one.
    } finally {
      this.busy = false;
    }
  }

  private async open(): Promise<pg.Client> {
    const session = this.opts.client();
    session.on('error', () => this.lost(session));
    session.on('end', () => this.lost(session));
    session.on('notification', (n) => {
      if (n.channel !== CHANNEL || n.payload !== String(this.opts.key)) return;
      // A notification can be read before the try's last answer is acted on: noted for it.
      if (this.trying) this.askedWhileTrying = true;
      void this.yieldAlone(session);
    });
    await session.connect();
    try {
      await session.query(`SET idle_session_timeout = ${this.timings.idleSessionTimeoutMs}`);
      await session.query(`LISTEN ${CHANNEL}`);
      const { rows } = await session.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      this.sessionPid = rows[0]?.pid ?? null;
    } catch (err) {
      await session.end().catch(() => undefined);
      throw err;
    }
    this.session = session;
    return session;
  }

  private async heartbeat(session: pg.Client): Promise<void> {
    const began = performance.now();
    await session.query('SELECT 1');
    if (this.alone) this.leaseFrom = began;
  }

  /** ALONE first, then the other writers: taken in the opposite order by `joinAsWriter`. */
  private async tryAlone(session: pg.Client): Promise<void> {
    const began = performance.now();
    this.trying = true;
    this.askedWhileTrying = false;
    try {
      const got = await session.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS got', [this.opts.key, ALONE]);
      if (!got.rows[0]?.got) {
        this.nextTry = performance.now() + this.timings.retryMs;
        return;
      }
      // Held but not alone: any failure from here must give ALONE back, or a writer would wait on it.
      const others = await session
        .query<{ pid: number }>(`${HOLDER_OF} AND objid = ${WRITER} AND mode = 'ShareLock'`, [this.opts.key])
        .catch(async (err: unknown) => {
          await this.giveBack(session);
          throw err;
        });
      if (this.askedWhileTrying || others.rows.some((r) => !this.opts.ownPids.has(r.pid))) {
        await this.giveBack(session);
        this.nextTry = performance.now() + this.timings.retryMs;
        return;
      }
      this.epoch++;
      this.leaseFrom = began;
      this.setAlone(true);
    } finally {
      this.trying = false;
    }
  }

  /** A writer asked: stop trusting the cache, then give ALONE back so it can go on. */
  private async yieldAlone(session: pg.Client): Promise<void> {
    if (!this.alone || session !== this.session) return;
    this.setAlone(false);
    await this.giveBack(session);
  }

  /** Releases ALONE; if even that fails, ends the session, which releases it too. */
  private async giveBack(session: pg.Client): Promise<void> {
    await session.query('SELECT pg_advisory_unlock($1, $2)', [this.opts.key, ALONE]).catch(() => this.lost(session));
  }

  private lost(session: pg.Client): void {
    if (session !== this.session) return;
    this.setAlone(false);
    this.session = null;
    this.sessionPid = null;
    void session.end().catch(() => undefined);
  }

  private setAlone(alone: boolean): void {
    if (this.alone === alone) return;
    this.alone = alone;
    this.opts.onChange?.(alone);
  }
}

/**
 * Calls `onWrite` when a statement that may have changed rows finishes on `client`, before its
 * caller sees the result (a transaction's statements and its COMMIT each count: a cache filled
 * between the two is refused by the second). Only a plain `SELECT`, and a write that touched no
 * row, are taken as reads; the one function called through SELECT that changes rows,
 * `claim_fair_jobs`, changes jobs only, never a row a cache holds. A failed statement counts too:
 * better a needless miss than a stale hit.
 */
export function countWrites(client: pg.ClientBase, onWrite: () => void): void {
  type Query = (...args: unknown[]) => unknown;
  // The class's method as it is at each call (not a copy taken now): whatever wraps it later still runs.
  const proto = Object.getPrototypeOf(client) as { query: Query };
  const counted: Query = (...args) => {
    const result = proto.query.apply(client, args);
    if (!(result instanceof Promise)) {
      onWrite(); // a callback or a stream: counted at once (Stowage sends neither)
      return result;
    }
    return result.then(
      (r: { command?: string; rowCount?: number | null }) => {
        if (!(r.command === 'SELECT' && isPlainSelect(args[0])) && !changedNoRow(r)) onWrite();
        return r;
      },
      (err: unknown) => {
        onWrite();
        throw err;
      },
    );
  };
  (client as unknown as { query: Query }).query = counted;
}

/** A statement text starting with SELECT (a data-modifying WITH … SELECT reports SELECT too). */
function isPlainSelect(first: unknown): boolean {
  const text = typeof first === 'string' ? first : (first as { text?: unknown } | undefined)?.text;
  return typeof text === 'string' && /^\s*select\b/i.test(text);
}

/**
 * An INSERT, UPDATE, DELETE or MERGE that touched no row changed nothing (the schema has no
 * statement-level triggers): the queue's periodic sweeps, which mostly find nothing, then leave
 * the stamp alone, as SQLite's `total_changes()` does.
 */
function changedNoRow(r: { command?: string; rowCount?: number | null }): boolean {
  return r.rowCount === 0 && (r.command === 'INSERT' || r.command === 'UPDATE' || r.command === 'DELETE' || r.command === 'MERGE');
}

/** The backend pid of a connected client (pg keeps it from the server's BackendKeyData). */
export function backendPid(client: pg.ClientBase): number | undefined {
  return (client as unknown as { processID?: number }).processID;
}
