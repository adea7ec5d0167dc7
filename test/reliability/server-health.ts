/** Whether a test server is still alive and serving, and what its process uses, from /proc. */
import fs from 'node:fs';
import type { TestServer } from '../helpers/server.js';

export async function healthy(server: TestServer): Promise<boolean> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return false;
  try {
    const answers = await Promise.all([server.rest, server.upload, server.cdn].map((base) => fetch(`${base}/healthz`, { signal: AbortSignal.timeout(10_000) })));
    return answers.every((r) => r.status === 200);
  } catch {
    return false;
  }
}

export function rssMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Math.round(Number(kb) / 1024);
}

export function openFds(pid: number): number {
  return fs.readdirSync(`/proc/${pid}/fd`).length;
}

/** Samples the peak RSS of a process every `everyMs` until stopped. */
export function rssSampler(pid: number, everyMs = 100): { peakMb(): number; stop(): number } {
  let peak = 0;
  const tick = () => {
    try {
      peak = Math.max(peak, rssMb(pid));
    } catch {
      // The process is gone; the liveness check reports that.
    }
  };
  tick();
  const timer = setInterval(tick, everyMs);
  return {
    peakMb: () => peak,
    stop: () => {
      clearInterval(timer);
      tick();
      return peak;
    },
  };
}
