/**
 * Point reads that arrive together run as one query: the read side of group commit
 * (group-commit.ts). Keys asked for during one turn of the event loop are sent as one batch at the
 * end of that turn (setImmediate, so every request of the turn's I/O has had its say); while
 * `maxInFlight` batches are out, new keys wait and leave together as soon as one returns.
 *
 * Why: on PostgreSQL a file's info is one round trip per request, and the largest share of that
 * request's CPU is the client's socket write that wakes a server backend (about 45 % of the busy
 * main thread in a profile of `bench/rest.mjs`; docs/performance.md). One write per batch instead
 * of one per request is what a cache would save, without a cache's staleness.
 *
 * Freshness: a key never joins a batch already sent. Its batch is sent after it was asked for, so
 * the answer is at least as new as a lone query issued at that moment would give (read-your-writes
 * holds for a caller whose write committed before it asked).
 *
 * A batch that fails rejects each of its callers with that error; the next batch is unaffected.
 */
export type BatchRead<K, V> = (keys: readonly K[]) => Promise<ReadonlyMap<K, V>>;

export interface ReadBatcherOptions {
  /** Batches out at once; more keys wait for one to return. */
  maxInFlight: number;
  /** Most keys in one batch: a larger wait is sent as several. */
  maxBatch: number;
}

/**
 * The store's batched reads (file rows, project counters): a share of the PostgreSQL pool's 10
 * connections (db/connect.ts), leaving the rest to writes.
 */
export const STORE_READ_BATCHING: ReadBatcherOptions = { maxInFlight: 4, maxBatch: 128 };

interface Waiter<V> {
  resolve(value: V | undefined): void;
  reject(err: unknown): void;
}

/** Counts since the batcher was made (the node's metrics show them). */
export interface ReadBatchStats {
  /** Calls of `get`. */
  asked: number;
  /** Batches sent: `asked / batches` is the mean batch's callers. */
  batches: number;
}

export class ReadBatcher<K, V> {
  readonly stats: ReadBatchStats = { asked: 0, batches: 0 };
  private waiting = new Map<K, Waiter<V>[]>();
  private scheduled = false;
  private inFlight = 0;

  constructor(
    private readonly read: BatchRead<K, V>,
    private readonly options: ReadBatcherOptions = STORE_READ_BATCHING,
  ) {}

  /** The value the batch read gives for `key`, or undefined when it gives none. */
  get(key: K): Promise<V | undefined> {
    this.stats.asked++;
    return new Promise((resolve, reject) => {
      const waiters = this.waiting.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else this.waiting.set(key, [{ resolve, reject }]);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.options.maxInFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.sendWaiting();
    });
  }

  private sendWaiting(): void {
    while (this.waiting.size > 0 && this.inFlight < this.options.maxInFlight) {
      const batch = this.takeBatch();
      this.inFlight++;
      this.stats.batches++;
      void this.run(batch);
    }
  }

  private takeBatch(): Map<K, Waiter<V>[]> {
    if (this.waiting.size <= this.options.maxBatch) {
      const all = this.waiting;
      this.waiting = new Map();
      return all;
    }
    const batch = new Map<K, Waiter<V>[]>();
    for (const [key, waiters] of this.waiting) {
      if (batch.size === this.options.maxBatch) break;
      batch.set(key, waiters);
      this.waiting.delete(key);
    }
    return batch;
  }

  private async run(batch: Map<K, Waiter<V>[]>): Promise<void> {
    try {
      const found = await this.read([...batch.keys()]);
      for (const [key, waiters] of batch) for (const w of waiters) w.resolve(found.get(key));
    } catch (err) {
      for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
    } finally {
      this.inFlight--;
      // Keys that waited for a free slot leave now, together; a lone key later still waits only
      // for the end of its own turn.
      if (this.waiting.size > 0) this.sendWaiting();
    }
  }
}
