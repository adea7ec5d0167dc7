/**
 * Reads coalesced per turn of the event loop: the webhook jobs a claim hands the worker start in
 * one synchronous loop, and each one's first read is asked for before any of them awaits, so
 * gets queued until the next microtask are all the jobs of that claim.
 */

interface Waiting<K, V> {
  key: K;
  resolve(value: V | undefined): void;
  reject(err: unknown): void;
}

/** Gets by key asked for in one turn, answered by one `load` of all their distinct keys. */
export class Coalesced<K, V> {
  private waiting: Waiting<K, V>[] = [];

  constructor(private readonly load: (keys: K[]) => Promise<Map<K, V>>) {}

  get(key: K): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      if (this.waiting.length === 0) queueMicrotask(() => void this.read());
      this.waiting.push({ key, resolve, reject });
    });
  }

  private async read(): Promise<void> {
    const batch = this.waiting;
    this.waiting = [];
    try {
      const found = await this.load([...new Set(batch.map((w) => w.key))]);
      for (const w of batch) w.resolve(found.get(w.key));
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }
}
