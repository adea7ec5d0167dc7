/**
 * Bounded processing: at most `concurrency` image pipelines run at once and at most `maxWaiting`
 * requests wait for a slot. Beyond that the CDN answers 503 with Retry-After instead of letting
 * memory grow with queued decodes.
 *
 * A slot is held until the work has really ended, not until it has answered: a render answered at
 * its deadline may keep a libvips thread and its buffers for a while, and freeing its slot at the
 * answer let a stream of slow URLs run many more renders at once than the bound (the server's
 * memory grew with every render past its deadline; docs/reliability.md).
 */
import { imageErrors } from '../core/error-catalogue/media.js';

/** Work that answers (`answer`) and ends (`ended`, never rejects), possibly later. */
export interface StartedWork<T> {
  answer: Promise<T>;
  ended: Promise<unknown>;
}

export class WorkQueue {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly concurrency: number, private readonly maxWaiting: number) {}

  get stats(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  async run<T>(start: () => StartedWork<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.maxWaiting) {
        throw imageErrors.overloaded();
      }
      // The finishing job hands its slot over directly, so `running` never dips and lets a newcomer jump the line.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    let work: StartedWork<T>;
    try {
      work = start();
    } catch (e) {
      this.release();
      throw e;
    }
    void work.ended.then(() => this.release(), () => this.release());
    return work.answer;
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}

/**
 * Identical concurrent requests share one computation: the first caller runs `work`, later callers
 * with the same key get the same promise until it settles.
 */
export class SingleFlight<T> {
  private readonly inFlight = new Map<string, Promise<T>>();

  /** `[promise, leader]`: leader is true for the caller whose `work` runs. */
  do(key: string, work: () => Promise<T>): [Promise<T>, boolean] {
    const existing = this.inFlight.get(key);
    if (existing) return [existing, false];
    const p = work().finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, p);
    return [p, true];
  }
}
