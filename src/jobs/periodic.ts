/**
 * Periodic jobs: every node proposes the job once per period under the same unique key, and the
 * queue keeps one, so exactly one node runs each period's work. The enqueue wakes the workers.
 */
import type { Logger } from 'pino';
import type { PeriodicKind } from './kinds.js';
import type { JobQueue } from './queue.js';

export interface PeriodicSchedule {
  kind: PeriodicKind;
  periodMs: number;
  /** Delay of the first proposal (default: at once). */
  firstAfterMs?: number;
  /** Unique key of one period's job (default: `<kind>:<slot>`). */
  keyOf?(slot: number): string;
}

export function schedulePeriodic(queue: JobQueue, log: Logger, s: PeriodicSchedule): () => void {
  const propose = () => {
    const slot = Math.floor(Date.now() / s.periodMs);
    const uniqueKey = s.keyOf ? s.keyOf(slot) : `${s.kind}:${slot}`;
    queue.enqueue({ kind: s.kind, payload: { slot }, uniqueKey, maxAttempts: 3 }).catch((err: unknown) => log.warn({ err, kind: s.kind }, 'could not schedule a periodic job'));
  };
  let interval: NodeJS.Timeout | null = null;
  const first = setTimeout(() => {
    propose();
    interval = setInterval(propose, s.periodMs);
    interval.unref();
  }, s.firstAfterMs ?? 0);
  first.unref();
  return () => {
    clearTimeout(first);
    if (interval) clearInterval(interval);
  };
}
