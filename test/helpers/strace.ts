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
 * `work` runs; `options` are strace's own (`-e trace=…`, `-y`…).
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
  return fs.readFileSync(out, 'utf8').split('\n');
}
