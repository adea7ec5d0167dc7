/**
 * sharp (libvips), loaded at its first use instead of at start. Loading it maps libvips and
 * initialises it: about 8-10 MB of a server's resident memory (measured idle and at a 1 GiB
 * upload's peak) that a node which renders no image, or none yet, need not hold, and that a large
 * upload's peak would otherwise carry.
 *
 * `sharp` stands in for the module's default export: calling it, or reading any of its
 * properties, loads the module (synchronously, once per thread). Settings a feature chooses at
 * start go through `configureSharp`, which applies them when the module loads, so choosing them
 * loads nothing. Child processes that exist to run sharp import it directly.
 */
import { createRequire } from 'node:module';
import type SharpModule from 'sharp';

type SharpFunction = typeof SharpModule;

let loaded: SharpFunction | null = null;
const settings: ((s: SharpFunction) => void)[] = [];

function load(): SharpFunction {
  if (loaded) return loaded;
  const s = createRequire(import.meta.url)('sharp') as SharpFunction;
  // libvips' operation cache is off in every thread that loads it (the setting is the process's).
  // It would keep up to 20 loaded files open, removed or not (a render's scratch images, hundreds
  // of MB each for a large one, held their disk space until evicted), and up to 50 MB of
  // operations' pixels for 100 operations: CDN URLs seldom repeat an operation on the same input,
  // and a repeated URL is answered by the result cache.
  s.cache(false);
  for (const apply of settings) apply(s);
  loaded = s;
  return s;
}

/** Applies `apply` to sharp when it loads in this thread (at once if it has). */
export function configureSharp(apply: (s: SharpFunction) => void): void {
  if (loaded) apply(loaded);
  else settings.push(apply);
}

const sharp = new Proxy(function notLoaded() {} as unknown as SharpFunction, {
  apply: (_target, self, args: unknown[]) => Reflect.apply(load(), self, args) as unknown,
  construct: (_target, args: unknown[]) => Reflect.construct(load(), args) as object,
  get: (_target, key) => Reflect.get(load(), key) as unknown,
});

export default sharp;
