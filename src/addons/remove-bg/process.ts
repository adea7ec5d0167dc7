/**
 * The one remove_bg child process of a node: started on first use (the model loads once per
 * process, lazily), one request at a time, killed when a run passes its time bound or the memory
 * bound (STOWAGE_REMOVE_BG_MAX_RSS_BYTES), and stopped after a few idle minutes to give the
 * memory back. A killed child is simply started again by the next request. Started by the
 * launcher helper (src/launcher/), never forked from the server; messages go through it.
 */
import fs from 'node:fs';
import { compiledSibling } from '../../core/compiled-path.js';
import { launch, type Launched } from '../../launcher/launch.js';
import { AddonError } from '../types.js';
import type { RemoveBgReply, RemoveBgRequest } from './protocol.js';

const IDLE_MS = 5 * 60_000;
const RSS_CHECK_MS = 500;

function rssOf(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return Number(kb ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** The running child and how to hear from it: replies and its end. */
interface Child {
  process: Launched;
  exited: boolean;
  onReply: ((reply: RemoveBgReply) => void) | null;
  onExit: ((why: string) => void) | null;
}

export class RemoveBgProcess {
  private child: Child | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private idle: NodeJS.Timeout | null = null;
  private nextId = 1;

  /** Runs one request after the ones before it. */
  run(req: Omit<RemoveBgRequest, 'id'>, signal: AbortSignal, maxRss: number): Promise<Extract<RemoveBgReply, { ok: true }>> {
    const turn = this.queue.then(() => this.once({ ...req, id: this.nextId++ }, signal, maxRss));
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  private spawn(): Child {
    if (this.child && !this.child.exited) return this.child;
    const child: Child = { process: launch(process.execPath, [compiledSibling(import.meta.url, './child.js')], { inheritOutput: true, onMessage: (m) => child.onReply?.(m as RemoveBgReply) }), exited: false, onReply: null, onExit: null };
    void child.process.exited.then((exit) => {
      child.exited = true;
      if (this.child === child) this.child = null;
      child.onExit?.(exit.started ? (exit.signal ?? `exit ${exit.code}`) : exit.message);
    });
    this.child = child;
    return child;
  }

  private once(req: RemoveBgRequest, signal: AbortSignal, maxRss: number): Promise<Extract<RemoveBgReply, { ok: true }>> {
    if (this.idle) clearTimeout(this.idle);
    if (signal.aborted) return Promise.reject(new AddonError('timed out before the background removal started'));
    const child = this.spawn();
    return new Promise<Extract<RemoveBgReply, { ok: true }>>((resolve, reject) => {
      const finish = (err: Error | null, reply?: Extract<RemoveBgReply, { ok: true }>) => {
        clearInterval(watch);
        signal.removeEventListener('abort', onAbort);
        child.onReply = null;
        child.onExit = null;
        this.idle = setTimeout(() => this.stop(), IDLE_MS);
        this.idle.unref();
        if (err) reject(err);
        else resolve(reply!);
      };
      const kill = (why: string) => {
        child.process.kill('SIGKILL');
        finish(new AddonError(why));
      };
      const onAbort = () => kill('the background removal took too long (STOWAGE_ADDON_TIMEOUT_MS)');
      child.onExit = (why) => finish(new Error(`the background-removal process ended (${why})`));
      child.onReply = (reply) => {
        if (reply.id !== req.id) return;
        if (reply.ok) finish(null, reply);
        else finish(new AddonError(reply.error));
      };
      const watch = setInterval(() => {
        const pid = child.process.pid;
        const rss = pid ? rssOf(pid) : 0;
        if (rss > maxRss) kill(`the background removal used more than ${Math.round(maxRss / 1024 ** 2)} MiB (STOWAGE_REMOVE_BG_MAX_RSS_BYTES)`);
      }, RSS_CHECK_MS);
      signal.addEventListener('abort', onAbort, { once: true });
      child.process.send(req);
    });
  }

  stop(): void {
    if (this.idle) clearTimeout(this.idle);
    this.child?.process.kill('SIGTERM');
    this.child = null;
  }
}
