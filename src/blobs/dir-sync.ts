/**
 * fsync of the blob store's directories, shared: a new file's directory entry is durable only once
 * its directory is synced, and every small upload needs that before its answer. Opened, synced and
 * closed per upload, that was three requests to libuv's thread pool, each a wake-up of a pool
 * thread and a callback on the main thread (on one core, a context switch each way).
 *
 * - Each directory stays open once synced (a descriptor per directory, at most MAX_OPEN; the
 *   store's directories are never removed while a node runs, so a descriptor never outlives the
 *   directory it names). fsync applies to the directory, not to the descriptor.
 * - Syncs of one directory are shared, as the WAL's are (db/wal-sync.ts): a caller arriving while
 *   a sync of its directory runs waits for the next one, which every caller arriving meanwhile
 *   shares. The running sync may have started before the caller's entry was made, so it never
 *   answers for it; the next one starts after, so it does.
 */
import fs from 'node:fs';

/** Directories kept open: files/ has 256 subdirectories, a node writes under a few more. */
const MAX_OPEN = 512;

interface DirState {
  fd: number | null;
  inFlight: Promise<void> | null;
  queued: Promise<void> | null;
}

export class DirectorySyncs {
  private readonly dirs = new Map<string, DirState>();
  private closed = false;

  /** Resolves once every entry made in `dir` before this call is on disk. */
  sync(dir: string): Promise<void> {
    const state = this.state(dir);
    if (state.queued) return state.queued;
    if (state.inFlight) {
      const after = (): Promise<void> => {
        state.queued = null;
        return this.start(dir, state);
      };
      state.queued = state.inFlight.then(after, after);
      return state.queued;
    }
    return this.start(dir, state);
  }

  /** Closes every descriptor once the syncs under way are done; later syncs open and close their own. */
  close(): Promise<void> {
    return this.closeAll();
  }

  private async closeAll(): Promise<void> {
    this.closed = true;
    const states = [...this.dirs.values()];
    this.dirs.clear();
    await Promise.allSettled(states.flatMap((s) => [s.inFlight, s.queued]));
    await Promise.all(states.map((s) => (s.fd === null ? undefined : closeFd(s.fd))));
  }

  private state(dir: string): DirState {
    let state = this.dirs.get(dir);
    if (!state) {
      this.evictIdle();
      state = { fd: null, inFlight: null, queued: null };
      this.dirs.set(dir, state);
    }
    return state;
  }

  private start(dir: string, state: DirState): Promise<void> {
    const run = this.fsync(dir, state).finally(() => {
      if (state.inFlight === run) state.inFlight = null;
    });
    state.inFlight = run;
    return run;
  }

  private async fsync(dir: string, state: DirState): Promise<void> {
    if (this.closed) return syncOnce(dir);
    const fd = await this.descriptor(dir, state);
    try {
      await new Promise<void>((resolve, reject) => fs.fsync(fd, (err) => (err ? reject(err) : resolve())));
    } catch (err) {
      // The next sync starts from a fresh open, which reports the directory's state as it is then.
      state.fd = null;
      void closeFd(fd);
      throw err;
    }
  }

  /** Opened only inside a sync, one at a time per directory: eviction skips it meanwhile, close() waits for it. */
  private async descriptor(dir: string, state: DirState): Promise<number> {
    state.fd ??= await openDir(dir);
    return state.fd;
  }

  /** Keeps at most MAX_OPEN directories: closes the oldest with no sync under way. */
  private evictIdle(): void {
    if (this.dirs.size < MAX_OPEN) return;
    for (const [dir, state] of this.dirs) {
      if (state.inFlight || state.queued) continue;
      this.dirs.delete(dir);
      if (state.fd !== null) void closeFd(state.fd);
      return;
    }
  }
}

function openDir(dir: string): Promise<number> {
  return new Promise((resolve, reject) => fs.open(dir, 'r', (err, fd) => (err ? reject(err) : resolve(fd))));
}

function closeFd(fd: number): Promise<void> {
  return new Promise((resolve) => fs.close(fd, () => resolve()));
}

/** open, fsync, close with plain callbacks (after close: nothing is kept open any more). */
export function syncOnce(dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.open(dir, 'r', (openErr, fd) => {
      if (openErr) return reject(openErr);
      fs.fsync(fd, (syncErr) => fs.close(fd, (closeErr) => (syncErr ?? closeErr ? reject(syncErr ?? closeErr) : resolve())));
    });
  });
}
