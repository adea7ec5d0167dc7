/**
 * Watching a running server from outside with strace: for tests whose subject is which thread
 * makes which system call (durable commits off the event loop, no fork of the server).
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';

export const haveStrace = spawnSync('strace', ['-V']).status === 0;

/**
 * The trace lines of every thread of `pid` (`-f`, each line prefixed with its thread id) while
 * `work` runs; `options` are strace's own (`-e trace=…`, `-y`…). Each call is one line, placed
 * where it finished (see `wholeCalls`).
 */
export async function traced(pid: number, options: string[], work: () => Promise<void>): Promise<string[]> {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-strace-')), 'trace.txt');
  const strace = spawn('strace', ['-f', ...options, '-p', String(pid), '-o', out], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  strace.stderr.on('data', (d: Buffer) => (err += d.toString()));
  // strace says "Process N attached" once it traces the threads.
  for (let i = 0; i < 100 && !/attached/.test(err); i++) await new Promise((r) => setTimeout(r, 50));
  expect(err).toMatch(/attached/);
  try {
    await work();
  } finally {
    strace.kill('SIGINT');
    await new Promise((r) => strace.once('exit', r));
  }
  return wholeCalls(fs.readFileSync(out, 'utf8').split('\n'));
}

const UNFINISHED = / <unfinished \.\.\.>$/;
const RESUMED = /^(\d+)\s+<\.\.\. \w+ resumed>/;

/**
 * With several threads, strace splits a call that another thread interrupts into an "unfinished"
 * line (its arguments) and a later "resumed" line (its result), so neither alone says e.g. which
 * file an open failed on. Each pair becomes one line, at the resumed line's place: when it finished.
 */
export function wholeCalls(lines: string[]): string[] {
  const pending = new Map<string, string>();
  const whole: string[] = [];
  for (const line of lines) {
    if (UNFINISHED.test(line)) {
      pending.set(/^(\d+)/.exec(line)?.[1] ?? '', line.replace(UNFINISHED, ''));
      continue;
    }
    const resumed = RESUMED.exec(line);
    const start = resumed ? pending.get(resumed[1] as string) : undefined;
    if (resumed && start !== undefined) {
      pending.delete(resumed[1] as string);
      whole.push(start + line.slice(resumed[0].length));
    } else {
      whole.push(line);
    }
  }
  return whole;
}
