/**
 * Directories made under the blob directory, durable before anything in them is acknowledged.
 *
 * A file's fsync and its directory's make the file and its own entry durable, but a directory that
 * `mkdir -p` made on the way (a blob's `files/<xx>/`, a multipart upload's own directory) is named
 * only in its parent, and a crash could drop it with every file under it. `makeDirDurably` makes
 * the missing directories and syncs the parent of each one it made.
 *
 * Making directories is rare (once per two-character prefix, once per multipart upload), so it is
 * done one call at a time: a caller that finds a directory another call has just made (its mkdir
 * answers "exists") is queued behind that call's syncs, and a writer that opened a file in an
 * existing directory without a mkdir asks `creationsSettled` whether one is under way.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { syncOnce } from './dir-sync.js';

let queue: Promise<void> = Promise.resolve();
let underWay = 0;

/** Resolves once `dir` exists and every directory this call made is named durably in its parent. */
export function makeDirDurably(dir: string): Promise<void> {
  underWay++;
  const run = queue.then(() => make(dir));
  const settled = () => {
    underWay--;
  };
  queue = run.then(settled, settled);
  return run;
}

/** Null when no directory is being made; else resolves once those being made are durable. */
export function creationsSettled(): Promise<void> | null {
  return underWay === 0 ? null : queue;
}

async function make(dir: string): Promise<void> {
  const first = await fsp.mkdir(dir, { recursive: true });
  if (first === undefined) return;
  // Every directory from `dir` up to `first` is new; each is named in its parent.
  const parents: string[] = [];
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    parents.push(path.dirname(d));
    if (d === path.resolve(first) || d === path.dirname(d)) break;
  }
  await Promise.all(parents.map(syncOnce));
}
