/**
 * One writer per upload on this node. A PATCH holds its upload's lock while it writes; HEAD,
 * another PATCH or DELETE wait a moment for it, because the usual holder is a PATCH whose client
 * just went away: it is about to record what it received, and the client's resume must see that.
 * The staging file lives on this node's disk, so an in-process lock is the right scope.
 */
export class UploadLocks {
  private readonly held = new Map<string, Promise<void>>();

  /** Runs `work` holding `id`'s lock; waits up to `waitMs` for a holder, then throws `busy()`. */
  async with<T>(id: string, waitMs: number, busy: () => Error, work: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + waitMs;
    for (let current = this.held.get(id); current; current = this.held.get(id)) {
      const left = deadline - Date.now();
      if (left <= 0) throw busy();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([current, new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
    }
    let release!: () => void;
    this.held.set(id, new Promise<void>((resolve) => (release = resolve)));
    try {
      return await work();
    } finally {
      this.held.delete(id);
      release();
    }
  }
}
