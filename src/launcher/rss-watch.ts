/**
 * Watches the resident memory of process groups (a tool and what it forks: soffice starts
 * soffice.bin, bubblewrap starts the tool) and calls back once any process of a group passes its
 * bound. Runs in the launcher helper, never on the server's event loop. RLIMIT_DATA (sandbox.ts)
 * stops a single huge allocation; this watch is what notices a document that grows a converter
 * step by step (a zip bomb) and says why it was stopped.
 *
 * One pass every 200 ms over /proc while any group is watched: the group of each process is in
 * /proc/<pid>/stat (also for processes in a pid namespace of their own: their outside pid and
 * group are listed), the RSS of the group's processes in /proc/<pid>/status.
 */
import fsp from 'node:fs/promises';

const INTERVAL_MS = 200;

interface Watched {
  limit: number;
  peak: number;
  over: boolean;
  onOver: () => void;
}

export class RssWatch {
  private readonly groups = new Map<number, Watched>();
  private timer: NodeJS.Timeout | null = null;

  /** Starts watching group `pgid`; `onOver` is called once, when a process passes `limit` bytes. */
  watch(pgid: number, limit: number, onOver: () => void): void {
    this.groups.set(pgid, { limit, peak: 0, over: false, onOver });
    this.schedule();
  }

  /** Stops watching; answers the largest RSS seen and whether the bound was passed. */
  unwatch(pgid: number): { peakRssBytes: number; overMemory: boolean } {
    const w = this.groups.get(pgid);
    this.groups.delete(pgid);
    return { peakRssBytes: w?.peak ?? 0, overMemory: w?.over ?? false };
  }

  private schedule(): void {
    if (this.timer || this.groups.size === 0) return;
    this.timer = setTimeout(() => {
      void this.pass().finally(() => {
        this.timer = null;
        this.schedule();
      });
    }, INTERVAL_MS);
  }

  private async pass(): Promise<void> {
    const names = await fsp.readdir('/proc').catch(() => [] as string[]);
    await Promise.all(names.filter((n) => /^\d+$/.test(n)).map((pid) => this.sample(pid)));
  }

  private async sample(pid: string): Promise<void> {
    const stat = await fsp.readFile(`/proc/${pid}/stat`, 'latin1').catch(() => null);
    if (stat === null) return;
    // After the command name (which may hold spaces and parentheses): state ppid pgrp …
    const pgid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
    const watched = this.groups.get(pgid);
    if (!watched) return;
    const status = await fsp.readFile(`/proc/${pid}/status`, 'latin1').catch(() => null);
    const kb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status ?? '')?.[1] ?? 0);
    const rss = kb * 1024;
    if (rss > watched.peak) watched.peak = rss;
    if (rss > watched.limit && !watched.over) {
      watched.over = true;
      watched.onOver();
    }
  }
}
