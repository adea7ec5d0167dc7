/**
 * The detector pool: worker threads (worker.ts) that run the models, so inference never holds
 * the main thread. Created on first use with `detectThreads` threads (STOWAGE_DETECT_THREADS, default 1: models
 * are memory-heavy and each thread loads its own copy), a bounded queue, and a time limit per
 * task (an aborted task's thread is terminated; the next one loads the models again).
 */
import { Piscina } from 'piscina';
import { DEFAULTS } from '../../config/defaults.js';
import type { Detection, DetectWhat, NsfwScores } from './types.js';
import type { DetectReply, DetectTask } from './worker.js';
import { imageErrors } from '../../core/error-catalogue/media.js';

/** The pool's settings; a node sets them from its configuration before the first detection. */
const settings: { threads: number; timeoutMs: number } = { threads: DEFAULTS.detectThreads, timeoutMs: DEFAULTS.detectTimeoutMs };

export function configureDetectors(config: { detectThreads: number; detectTimeoutMs: number }): void {
  settings.threads = config.detectThreads;
  settings.timeoutMs = config.detectTimeoutMs;
}
/** Tasks waiting for a thread; past it a request is refused at once instead of piling up. */
const MAX_QUEUE = 64;
/** Largest side of the image a face/object detector sees; boxes are scaled back. */
export const DETECT_MAX_SIDE = 640;
export const NSFW_INPUT = 224;

let pool: Piscina<DetectTask, DetectReply> | null = null;

/** The compiled worker; under vitest (TypeScript in src/) the build in dist/, as decode-pool.ts. */
function workerFile(): string {
  const here = new URL('./worker.js', import.meta.url);
  if (!import.meta.url.endsWith('.ts')) return here.href;
  return here.href.replace(/\/src\/media\/detect\/worker\.js$/, '/dist/media/detect/worker.js');
}

function detectPool(): Piscina<DetectTask, DetectReply> {
  pool ??= new Piscina<DetectTask, DetectReply>({
    filename: workerFile(),
    maxThreads: settings.threads,
    minThreads: 0,
    maxQueue: MAX_QUEUE,
    // Keep loaded models for a while: loading them costs seconds.
    idleTimeout: 10 * 60_000,
    resourceLimits: { maxOldGenerationSizeMb: 1024, maxYoungGenerationSizeMb: 64 },
  });
  return pool;
}

export async function closeDetectPool(): Promise<void> {
  const p = pool;
  pool = null;
  await p?.destroy();
}

async function runTask(task: DetectTask, timeoutMs: number, transfer: ArrayBuffer[] = []): Promise<DetectReply & { ok: true }> {
  let reply: DetectReply;
  try {
    reply = await detectPool().run(task, { signal: AbortSignal.timeout(Math.max(1, timeoutMs)), transferList: transfer });
  } catch (e) {
    const err = e as Error & { code?: string };
    if (err.name === 'AbortError') throw imageErrors.timeout(`Detection took longer than ${Math.round(timeoutMs) / 1000} s.`);
    if (/queue is (full|at limit)/i.test(err.message)) throw imageErrors.detectorBusy();
    throw e;
  }
  if (!reply.ok) throw new Error(`detector failed: ${reply.message}`);
  return reply;
}

/** A copy in its own ArrayBuffer, moved to the worker (sharp's buffers cannot be transferred). */
function movable(data: Uint8Array): Uint8Array {
  const copy = new Uint8Array(new ArrayBuffer(data.byteLength));
  copy.set(data);
  return copy;
}

/** RGB pixels, 3 channels, rows packed. */
export interface RgbImage { data: Uint8Array; width: number; height: number }

let runs = 0;
/** Face/object detections run by this process (the cache tests read it). */
export function detectionRuns(): number {
  return runs;
}

export async function detectIn(what: DetectWhat, img: RgbImage, timeoutMs = settings.timeoutMs): Promise<Detection[]> {
  runs++;
  const data = movable(img.data);
  const reply = await runTask({ op: what, data, width: img.width, height: img.height }, timeoutMs, [data.buffer as ArrayBuffer]);
  if (!('detections' in reply)) throw new Error('detector answered without detections');
  return reply.detections;
}

/** `img` must be NSFW_INPUT x NSFW_INPUT. */
export async function classifyNsfw(img: RgbImage, timeoutMs = settings.timeoutMs): Promise<NsfwScores> {
  const data = movable(img.data);
  const reply = await runTask({ op: 'nsfw', data, width: img.width, height: img.height }, timeoutMs, [data.buffer as ArrayBuffer]);
  if (!('nsfw' in reply)) throw new Error('detector answered without scores');
  return reply.nsfw;
}

export async function mainColorsOf(img: RgbImage, count: number, timeoutMs = settings.timeoutMs): Promise<[number, number, number][]> {
  const data = movable(img.data);
  const reply = await runTask({ op: 'colors', data, width: img.width, height: img.height, count }, timeoutMs, [data.buffer as ArrayBuffer]);
  if (!('colors' in reply)) throw new Error('detector answered without colours');
  return reply.colors;
}

/** Loads every model in the pool's thread (bench, and operators who prefer a slow start). */
export async function warmDetectors(timeoutMs = settings.timeoutMs): Promise<void> {
  await runTask({ op: 'warm' }, timeoutMs);
}
