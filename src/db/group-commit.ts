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
 * Writes of one shape (`merged`: job completions) are also run as one statement per batch: on
 * PostgreSQL each statement is a round trip, and a burst of webhook deliveries completed about
 * four jobs per commit, one UPDATE each. The merged statement runs where the batch's next plain
 * write would, or at its end, so a write queued after a merged one (a claim) still sees it done.
 *
 * On SQLite a batch's commit and its WAL sync are apart (Db.leaveSyncToCaller): the next batch
 * starts as soon as the previous one committed, while its sync runs on the thread pool, instead of
 * after the sync (a claim queued behind a batch waited for two syncs, one after the other, and
 * the claims of webhook deliveries are on the path of every delivery). A write that a crash may
 * undo harmlessly (a claim: its job is claimable again, as after any crash) can ask to be
 * answered at the commit (`unsynced`); every other write still resolves only once durable.
 *
 * On PostgreSQL a batch of nothing but single statements and such merged writes (a claim and the
 * outcomes around it) runs without BEGIN/COMMIT, as statements that each commit on their own
 * (autocommitSegments).
 *
 * Each write still resolves only after its transaction committed. If one write of a batch fails,
 * the batch's transaction rolls back and every write of it is run again alone, so only the
 * failing one fails (writes must therefore be safe to run twice until committed, as plain
 * inserts and fenced updates are).
 */
import type { Kysely, Transaction } from 'kysely';
import { runCombined, type MergedPart } from './combined-statement.js';
import type { Db } from './connect.js';
import type { Database } from './schema.js';

type Write<T> = (trx: Transaction<Database>) => Promise<T>;
type Statement<T> = (db: Kysely<Database>) => Promise<T>;

/**
 * One statement doing the work of several writes of one shape: called with the arguments of every
 * such write of a batch, it returns one result per argument, in their order. With a `part`, the
 * same writes can also run as one part of a statement combining the batch's merged writes
 * (PostgreSQL, combined-statement.ts); give one only to writes that depend on no other write of
 * a batch (an insert of new rows, a fenced update of rows nothing else in the batch touches).
 */
export type MergedStatement<A, R> = ((db: Kysely<Database>, args: readonly A[]) => Promise<R[]>) & {
  readonly part?: (db: Kysely<Database>, args: readonly A[]) => MergedPart<R>;
};

/**
 * A write of one shape, given as its merged statement and its argument (`mergedWrite`): joins the
 * batch's other writes of that shape. Order against the batch's plain writes is kept as for
 * `merged`; against other writes of the same item it is not (they must not depend on each other).
 */
export interface MergedWrite {
  readonly statement: MergedStatement<unknown, unknown>;
  readonly arg: unknown;
}

/** What runs before an item's own write: plain writes, or writes merged with others of their shape. */
export type BeforeWrite = Write<unknown> | MergedWrite;

export function mergedWrite<A>(statement: MergedStatement<A, unknown>, arg: A): MergedWrite {
  // The statement is only ever called with arguments given with it (runBatch groups by statement).
  return { statement: statement as MergedStatement<unknown, unknown>, arg };
}

/** Runs one write of `before` alone in `trx`. */
export async function runWrite(trx: Transaction<Database>, write: BeforeWrite): Promise<void> {
  if (typeof write === 'function') await write(trx);
  else await write.statement(trx, [write.arg]);
}

interface Merge extends MergedWrite {
  /** Writes of this item that run before its part of the merged statement (in the same transaction). */
  before: readonly BeforeWrite[];
}

interface Pending {
  /** The item alone, in a transaction of its own (a failed batch's second pass). */
  write: Write<unknown>;
  /** Set for a single-statement write: it may run alone outside a transaction. */
  statement: Statement<unknown> | null;
  /** Set for a write that joins its batch's merged statement of the same shape. */
  merge: Merge | null;
  /** Answered at its commit, before the WAL sync (see the top). */
  unsynced: boolean;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/** Options of a write. */
export interface WriteOptions {
  /**
   * Resolve once committed, without waiting for the commit to reach the disk (SQLite; on
   * PostgreSQL a commit is durable when it returns). Only for a write whose loss in a crash is
   * harmless: a job's claim, whose lease a crash ends anyway.
   */
  unsynced?: boolean;
}

/** Merged statements collected in a batch, waiting for the next plain write or the batch's end. */
type MergeGroups = Map<MergedStatement<unknown, unknown>, { at: number[]; args: unknown[] }>;

/** Index of a merged write whose result nobody waits for (a `before` write). */
const UNAWAITED = -1;

export interface GroupCommitOptions {
  /** Writes committed in one transaction at most (256). */
  maxBatch?: number;
  /**
   * Every write waits for its commit's sync (none is `unsynced`), so on SQLite a batch is held
   * while a WAL sync runs with none queued behind it (Db.syncTurn): its writes would wait for the
   * sync after that one anyway, and committed once it ends they share one transaction with
   * everything that arrived meanwhile (new files: about 21 WAL pages for a row committed alone,
   * 15 for two, 12 for four, and one BEGIN, COMMIT and webhook-subscription read per batch).
   */
  afterSync?: boolean;
}

export class GroupCommit {
  private pending: Pending[] = [];
  private flushing = false;

  private readonly db: Kysely<Database>;

  private readonly maxBatch: number;
  private readonly afterSync: boolean;

  constructor(private readonly store: Db, { maxBatch = 256, afterSync = false }: GroupCommitOptions = {}) {
    this.db = store.kysely;
    this.maxBatch = maxBatch;
    this.afterSync = afterSync;
  }

  /** Runs `write` in a transaction, shared with the writes that arrive meanwhile. */
  run<T>(write: Write<T>): Promise<T> {
    return this.push({ write, statement: null, merge: null, unsynced: false });
  }

  /** The same for a write of one statement. */
  statement<T>(write: Statement<T>, opts: WriteOptions = {}): Promise<T> {
    return this.push({ write, statement: write, merge: null, unsynced: opts.unsynced === true });
  }

  /**
   * `statement` for `arg`, merged with the batch's other calls with the same `statement` function
   * into one execution; `before` runs first, in the same transaction.
   */
  merged<A, R>(statement: MergedStatement<A, R>, arg: A, before: readonly BeforeWrite[] = []): Promise<R> {
    const one = async (db: Kysely<Database>): Promise<R> => {
      const [result] = await statement(db, [arg]);
      return result as R;
    };
    const write: Write<R> = async (trx) => {
      for (const w of before) await runWrite(trx, w);
      return one(trx);
    };
    const merge: Merge = { statement: statement as MergedStatement<unknown, unknown>, arg, before };
    return this.push({ write, statement: before.length === 0 ? one : null, merge, unsynced: false });
  }

  private push<T>(item: Omit<Pending, 'resolve' | 'reject'>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ ...item, resolve: (v) => resolve(v as T), reject });
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
        const turn = this.afterSync ? this.store.syncTurn?.() : null;
        // Its outcome is the writes' of the batch before: this batch's own sync reports its own.
        if (turn) await turn.catch(() => undefined);
        const batch = this.pending.splice(0, this.maxBatch);
        // PostgreSQL: a batch of single statements and combinable writes needs no transaction
        // (see autocommitSegments); each segment commits on its own, in the batch's order.
        const segments = this.store.dialect === 'postgres' ? autocommitSegments(batch) : null;
        for (const segment of segments ?? [batch]) await this.runSegment(segment);
      }
    } finally {
      this.flushing = false;
    }
  }

  /**
   * Runs writes together and answers them: a lone single statement as it is; on PostgreSQL writes
   * that are all combinable as one statement without BEGIN/COMMIT; anything else in a transaction.
   * When that fails, each write runs again alone, so only the failing one fails.
   */
  private async runSegment(batch: readonly Pending[]): Promise<void> {
    const lone = batch.length === 1 ? batch[0]!.statement : null;
    if (lone) {
      await this.commit(lone, false).then((r) => this.answer([batch[0]!], [r]), batch[0]!.reject);
      return;
    }
    const combine = this.store.dialect === 'postgres';
    try {
      // Only merged writes, all combinable: one statement, atomic without BEGIN and COMMIT.
      const single = combine && batch.every(combinable);
      const run = (db: Kysely<Database>) => runBatch(db, batch, combine);
      this.answer(batch, await this.commit(run, !single));
    } catch {
      for (const p of batch) {
        try {
          this.answer([p], [await this.commit((trx) => p.write(trx as Transaction<Database>), true)]);
        } catch (err) {
          p.reject(err);
        }
      }
    }
  }

  /** Runs `fn` (in a transaction when asked); resolves at its commit where the store syncs apart. */
  private commit<T>(fn: (db: Kysely<Database>) => Promise<T>, transaction: boolean): Promise<T> {
    const leave = this.store.leaveSyncToCaller;
    if (!leave) return transaction ? this.db.transaction().execute(fn) : fn(this.db);
    // Said while holding the connection: no other holder's release can take it for its own.
    const held = (db: Kysely<Database>): Promise<T> => {
      leave();
      return fn(db);
    };
    return transaction ? this.db.transaction().execute(held) : this.db.connection().execute(held);
  }

  /** Answers committed writes: `unsynced` ones at once, the others once the store synced the commit. */
  private answer(writes: readonly Pending[], results: readonly unknown[]): void {
    const synced = this.store.synced && writes.some((p) => !p.unsynced) ? this.store.synced() : null;
    writes.forEach((p, i) => {
      if (p.unsynced || !synced) p.resolve(results[i]);
      else synced.then(() => p.resolve(results[i]), p.reject);
    });
  }
}

/** Whether a write can run inside a combined statement: merged, and everything before it too, each with a part. */
function combinable(p: Pending): boolean {
  return p.merge !== null && p.merge.statement.part !== undefined && p.merge.before.every((w) => typeof w !== 'function' && w.statement.part !== undefined);
}

/**
 * PostgreSQL: a batch made only of single statements (claims) and combinable merged writes
 * (outcomes) as segments that each commit on their own: each run of combinable writes one
 * statement, each single statement alone, in the batch's order (merged writes ran before the next
 * plain write anyway, so a claim still sees the outcomes queued before it). Null when the batch
 * has another kind of write: it needs its transaction. In a burst of webhook deliveries a batch
 * was mostly a claim and outcomes: BEGIN, claim, outcomes, COMMIT, four round trips where two
 * do, and the claim was answered only after the outcomes' commit. Nothing in such a batch depends
 * on being atomic with the rest: each write's own statements stay in one statement.
 */
function autocommitSegments(batch: readonly Pending[]): Pending[][] | null {
  if (batch.length === 1 || !batch.every((p) => combinable(p) || (p.merge === null && p.statement !== null))) return null;
  const segments: Pending[][] = [];
  for (const p of batch) {
    const last = segments.at(-1);
    if (p.merge && last?.[0]?.merge) last.push(p);
    else segments.push([p]);
  }
  return segments;
}

/**
 * Runs a batch in order in `trx` (a transaction, or the bare connection when every write is
 * combinable: then nothing but one combined statement runs); merged writes run as one statement
 * per shape (`combine`: one statement for all shapes that have a part) before the next plain write.
 */
async function runBatch(trx: Kysely<Database>, batch: readonly Pending[], combine: boolean): Promise<unknown[]> {
  const results: unknown[] = new Array(batch.length);
  const groups: MergeGroups = new Map();
  // Plain writes only ever run in a transaction: a batch without one has none (combinable).
  const tx = trx as Transaction<Database>;
  for (const [i, p] of batch.entries()) {
    if (!p.merge) {
      await runMerged(trx, groups, results, combine);
      results[i] = await p.write(tx);
      continue;
    }
    for (const w of p.merge.before) {
      if (typeof w === 'function') await w(tx);
      else join(groups, w, UNAWAITED);
    }
    join(groups, p.merge, i);
  }
  await runMerged(trx, groups, results, combine);
  return results;
}

function join(groups: MergeGroups, write: MergedWrite, at: number): void {
  const group = groups.get(write.statement) ?? { at: [], args: [] };
  group.at.push(at);
  group.args.push(write.arg);
  groups.set(write.statement, group);
}

async function runMerged(trx: Kysely<Database>, groups: MergeGroups, results: unknown[], combine: boolean): Promise<void> {
  const entries = [...groups];
  groups.clear();
  const parts = combine ? entries.filter(([statement]) => statement.part) : [];
  const outs = new Map<MergedStatement<unknown, unknown>, unknown[]>();
  if (parts.length > 1) {
    const combined = await runCombined(trx, parts.map(([statement, { args }]) => statement.part!(trx, args)));
    parts.forEach(([statement], k) => outs.set(statement, combined[k]!));
  }
  for (const [statement, { at, args }] of entries) {
    const out = outs.get(statement) ?? (await statement(trx, args));
    if (out.length !== args.length) throw new Error(`merged statement returned ${out.length} results for ${args.length} writes`);
    at.forEach((index, k) => {
      if (index !== UNAWAITED) results[index] = out[k];
    });
  }
}
