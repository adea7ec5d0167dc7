/**
 * Frees the memory of body chunks already written, a few MiB at a time, instead of at V8's pace.
 *
 * Each chunk of a request body is its own malloc'd buffer (64 KiB; node:http copies every body
 * chunk out of the socket's read buffer), freed only when V8 collects the small Buffer object that
 * owns it. Those objects are tiny, so the young generation (4 MiB semi-spaces) fills only after
 * hundreds of MiB of body; what triggers a collection is V8's external-memory limit, about 64 MiB
 * of buffers above the last collection, and then it is a full one. So a 1 GiB upload kept up to
 * about 64 MiB of written, dead chunks at a time, which the main malloc arena kept as its high-water
 * mark: the largest part of the 50-60 MB a large upload added to the server's resident memory
 * (docs/performance.md, "What the design relies on").
 *
 * A young-generation collection (a scavenge) frees every chunk that is no longer referenced: with
 * 4 MiB semi-spaces it takes well under a millisecond, and it runs once per SCAVENGE_EVERY bytes
 * written by any writer (batched-file-writer.ts) unless V8 ran a collection of its own meanwhile, so
 * dead chunks stay bounded by about twice that much.
 * V8 exposes a collection to JavaScript only through its `gc` extension, which is enabled here at
 * first use (the documented `--expose-gc` flag, set from inside; the function is taken from a fresh
 * context, so no global `gc` appears in the application's). Where that fails, nothing changes.
 */
import { PerformanceObserver, constants } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * Bytes written between two scavenges: 2 MiB, 512 per GiB (about 0.2 ms each, so about 0.1 s of
 * the main thread per GiB). Every 8 MiB, a 1 GiB direct upload's main arena peaked 6 MB higher.
 */
const SCAVENGE_EVERY = 2 * 1024 * 1024;

type CollectGarbage = (options: { type: 'minor' | 'major'; execution?: 'sync' | 'async' }) => void;

let collect: CollectGarbage | null | undefined;
let sinceLast = 0;

function collector(): CollectGarbage | null {
  if (collect !== undefined) return collect;
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc: unknown = vm.runInNewContext('gc');
    collect = typeof gc === 'function' ? (gc as CollectGarbage) : null;
  } catch {
    collect = null;
  }
  return collect;
}

/** Whether V8 collected on its own since the last check (gcWatch). */
let collectedByV8 = false;
let watching = false;

/**
 * Notes every collection V8 starts on its own (not the ones forced here): many small bodies
 * allocate enough objects for a scavenge every dozen or so uploads, and that one frees the chunks
 * as well. Forced besides, a scavenge every 32 small uploads was half of all of them, and each
 * scavenge more promotes the objects of the uploads in flight to the old generation, which only a
 * full collection frees.
 */
function gcWatch(): void {
  if (watching) return;
  watching = true;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      // A gc entry's detail: { kind, flags } (node:perf_hooks).
      const flags = (entry as { detail?: { flags?: number } }).detail?.flags ?? 0;
      if ((flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) === 0) collectedByV8 = true;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
}

/** `bytes` of body chunks were written and are no longer needed by the writer. */
export function chunksWritten(bytes: number): void {
  gcWatch();
  sinceLast += bytes;
  if (sinceLast < SCAVENGE_EVERY) return;
  sinceLast = 0;
  if (collectedByV8) {
    collectedByV8 = false;
    return;
  }
  collector()?.({ type: 'minor' });
}
