/**
 * One pool of worker threads for pixel work in JS that must not hold the main thread: the decoders
 * sharp's libvips does not provide (decoders.ts) and the pixel steps of large images (colour
 * maps, blurs, blur_region, trim: pixel-file.ts), run by decode-worker.ts. Created on first use, one thread fewer than the CPUs, each with a bounded heap,
 * and every task with a time limit (an aborted task's thread is terminated, so a decoder stuck in
 * a hostile file stops). The main thread only sends bytes or a path and receives moved pixels
 * (or, for a pixel step, the path of the result).
 */
import os from 'node:os';
import { stat } from 'node:fs/promises';
import { Piscina } from 'piscina';
import { AppError } from '../../core/errors.js';
import { DECODER_HEAP_MB, MAX_DECODER_INPUT_BYTES } from '../limits.js';
import type { OtherKind } from './decoders.js';
import type { PixelFileResult, PixelFileTask } from './pixel-file.js';
import type { RawImage } from './types.js';
import type { DecodeReply, DecodeTask } from './decode-worker.js';
import type { SvgTransform } from './svg.js';
import { imageErrors } from '../../core/error-catalogue/media.js';

export interface DecodedPixels { data: Buffer; width: number; height: number; channels: 3 | 4 }
export interface EncodedInput { path: string | null; bytes: Buffer | null }

let pool: Piscina<DecodeTask, DecodeReply> | null = null;

/**
 * The compiled worker next to this module. Under vitest this module runs from `src/` as
 * TypeScript, which a worker thread cannot load: it then uses the build in `dist/` (the test
 * setup builds it first).
 */
function workerFile(): string {
  const here = new URL('./decode-worker.js', import.meta.url);
  if (!import.meta.url.endsWith('.ts')) return here.href;
  return here.href.replace(/\/src\/media\/pipeline\/decode-worker\.js$/, '/dist/media/pipeline/decode-worker.js');
}

function decodePool(): Piscina<DecodeTask, DecodeReply> {
  pool ??= new Piscina<DecodeTask, DecodeReply>({
    filename: workerFile(),
    // One fewer than the CPUs (one on two cores): after a pixel step on a large image a thread
    // keeps about twice that image's pixels until its next task or its idle end, 70 MB for a
    // 12 Mpx photo, and the CDN's renders already keep every CPU busy.
    maxThreads: Math.max(1, os.availableParallelism() - 1),
    minThreads: 0,
    idleTimeout: 30_000,
    // Bounds the JS heap of a decoder; pixel buffers are bounded by the header check (75 Mpx).
    resourceLimits: { maxOldGenerationSizeMb: DECODER_HEAP_MB, maxYoungGenerationSizeMb: 64 },
  });
  return pool;
}

/** Stops the threads (tests and orderly shutdown); a later decode starts a new pool. */
export async function closeDecodePool(): Promise<void> {
  const p = pool;
  pool = null;
  await p?.destroy();
}

async function runTask(task: DecodeTask, timeoutMs: number, transferList: ArrayBuffer[] = []): Promise<DecodeReply & { ok: true }> {
  let reply: DecodeReply;
  try {
    reply = await decodePool().run(task, { signal: AbortSignal.timeout(Math.max(1, timeoutMs)), transferList });
  } catch (e) {
    const err = e as Error & { code?: string };
    if (err.name === 'AbortError') throw imageErrors.timeout(`Decoding this image took longer than ${Math.round(timeoutMs) / 1000} s.`);
    if (err.code === 'ERR_WORKER_OUT_OF_MEMORY') throw imageErrors.tooLarge('Decoding this image needs more memory than a decoder may use.');
    throw e;
  }
  if (!reply.ok) throw new AppError(reply.status, reply.code, reply.message);
  return reply;
}

/** What the worker reads: the bytes when in memory (copied to it), else the path (read there). */
async function taskInput(src: EncodedInput): Promise<{ path: string | null; bytes: Uint8Array | null }> {
  const size = src.bytes ? src.bytes.length : (await stat(src.path!)).size;
  if (size > MAX_DECODER_INPUT_BYTES) throw imageErrors.inputTooLarge(MAX_DECODER_INPUT_BYTES);
  return src.bytes ? { path: null, bytes: src.bytes } : { path: src.path, bytes: null };
}

/** Decodes a BMP, PCX, TGA or HEIC file to 8-bit RGB(A) in a worker thread. */
export async function decodeInWorker(kind: OtherKind, src: EncodedInput, timeoutMs: number): Promise<DecodedPixels> {
  const reply = await runTask({ op: 'decode', kind, ...(await taskInput(src)) }, timeoutMs);
  const px = pixelsOf(reply);
  return { data: px.data, width: px.width, height: px.height, channels: px.channels };
}

/** HEIC primary image size from its container, parsed by libheif (wasm) in a worker thread. */
export async function heicSizeInWorker(src: EncodedInput, timeoutMs: number): Promise<{ width: number; height: number } | null> {
  const reply = await runTask({ op: 'heic-size', ...(await taskInput(src)) }, timeoutMs);
  return 'size' in reply ? reply.size : null;
}

function pixelsOf(reply: DecodeReply & { ok: true }): RawImage {
  if (!('data' in reply)) throw new Error('pixel worker answered without pixels');
  return { data: Buffer.from(reply.data.buffer, reply.data.byteOffset, reply.data.byteLength), width: reply.width, height: reply.height, channels: reply.channels };
}

/** How much of a pixel buffer one turn of the event loop copies: a few milliseconds' worth. */
const COPY_SLICE_BYTES = 4 * 1024 * 1024;

/**
 * A copy of `data` in an ArrayBuffer of its own, to be moved to a worker. sharp's output buffers
 * cannot be transferred, and structured cloning a large one costs far more main-thread time than
 * a native copy. The copy goes in slices with a turn of the event loop between them: in one piece,
 * the 123 MB of an 8192x5000 image held the loop for 70 ms (the CDN fuzzer's confirmed stalls on
 * `-/smart_resize/8192x5000/-/warmth/7/` and the like). Only greyscale widening of `raw()` still
 * comes this way; pixel steps go through files (pixelFileInWorker).
 */
async function movableCopy(data: Uint8Array): Promise<Uint8Array> {
  const copy = new Uint8Array(new ArrayBuffer(data.byteLength));
  for (let at = 0; at < data.byteLength; at += COPY_SLICE_BYTES) {
    if (at > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    // Same element type: each slice is one memcpy.
    copy.set(data.subarray(at, Math.min(data.byteLength, at + COPY_SLICE_BYTES)), at);
  }
  return copy;
}

/**
 * How long after the render's deadline a pixel-file task is aborted. sharp in the worker stops at
 * its own timeout first (whole seconds, rounded up) and the task then removes its partial output;
 * an abort terminates the thread, which waits for libvips to finish anyway and removes nothing.
 */
const PIXEL_FILE_GRACE_MS = 2_000;

/**
 * Runs a pixel step on a large image in a worker thread, from one scratch file to another
 * (pixel-file.ts): no pixel of it passes through the main thread.
 */
export async function pixelFileInWorker(task: Omit<PixelFileTask, 'endsAtMs'>, timeoutMs: number): Promise<PixelFileResult> {
  const reply = await runTask({ op: 'pixel-file', ...task, endsAtMs: Date.now() + timeoutMs }, timeoutMs + PIXEL_FILE_GRACE_MS);
  if (!('file' in reply)) throw new Error('pixel worker answered without a file');
  return reply.file;
}

/**
 * An SVG prepared in a worker thread (sanitised, geometry applied: svg.ts `prepareSvg`): parsing a
 * large one must not hold the main thread. The worker reads the file itself when it is on disk,
 * and its answer, UTF-8 bytes, is moved here, not copied.
 */
export async function prepareSvgInWorker(src: EncodedInput, transform: SvgTransform | null, timeoutMs: number): Promise<{ body: Buffer; elements: number; width: number; height: number }> {
  // The path when there is one, even with the bytes in memory: cloning 6 MB to the worker costs the main thread too.
  const reply = await runTask({ op: 'svg', path: src.path, bytes: src.path ? null : src.bytes, transform }, timeoutMs);
  if (!('svg' in reply)) throw new Error('svg worker answered without an svg');
  return { body: Buffer.from(reply.svg.buffer, reply.svg.byteOffset, reply.svg.byteLength), elements: reply.elements, width: reply.width, height: reply.height };
}

/** Grey or grey+alpha pixels widened to RGB(A) in a worker thread. */
export async function widenInWorker(grey: Buffer, width: number, height: number, channels: 1 | 2, timeoutMs: number): Promise<RawImage> {
  const data = await movableCopy(grey);
  return pixelsOf(await runTask({ op: 'widen', data, width, height, grey: channels }, timeoutMs, [data.buffer as ArrayBuffer]));
}
