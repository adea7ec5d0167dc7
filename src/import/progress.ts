/**
 * The import's progress: one line rewritten in place on a terminal, plain lines every so often
 * otherwise (logs, CI), and a summary at the end.
 */
import { settled, type ImportCounters, type Tally } from './counters.js';

export interface ProgressOptions {
  /** Whether `out` is a terminal (one updating line). */
  tty: boolean;
  /** How often a plain line is written when not on a terminal. */
  intervalMs: number;
}

const TTY_REFRESH_MS = 250;

export function progressLine(c: ImportCounters, nowMs = Date.now()): string {
  const seconds = Math.max((nowMs - c.startedMs) / 1000, 0.001);
  const parts = [`files ${tally(c.files)}`, `groups ${tally(c.groups)}`, `${formatBytes(c.bytes)} at ${formatBytes(c.bytes / seconds)}/s`];
  if (c.retries > 0) parts.push(`${c.retries} retries`);
  return parts.join(' · ');
}

function tally(t: Tally): string {
  const detail = [`${t.imported} imported`, `${t.present} already here`];
  if (t.failed > 0) detail.push(`${t.failed} failed`);
  return `${settled(t)}/${t.total ?? '?'} (${detail.join(', ')})`;
}

export function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

/** Starts showing progress on `out`; the returned function stops and writes the last state. */
export function showProgress(c: ImportCounters, out: NodeJS.WritableStream, opts: ProgressOptions): () => void {
  const draw = () => out.write(opts.tty ? `\r\x1b[K${progressLine(c)}` : `${progressLine(c)}\n`);
  const timer = setInterval(draw, opts.tty ? TTY_REFRESH_MS : opts.intervalMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    draw();
    if (opts.tty) out.write('\n');
  };
}

/** The closing report: totals, then every failure with its reason. */
export function summary(c: ImportCounters): string {
  const lines = [`import ${c.failures.length === 0 ? 'finished' : 'finished with failures'}: ${progressLine(c)}`];
  if (c.failures.length > 0) {
    lines.push(`${c.failures.length} failed:`);
    for (const f of c.failures) lines.push(`  ${f.kind} ${f.id}: ${f.reason}`);
  }
  return lines.join('\n') + '\n';
}
