/**
 * Every processing limit (cdn-url-api.md "Limits", and the work budget of one render), checked in
 * layers: from the plan alone before any byte is read (chain length, sizes an operation asks for),
 * declared header dimensions before any decode (decompression bombs), sharp's own
 * limitInputPixels as a second fence, the size of every intermediate image before a stage is
 * committed, a wall-clock deadline for the whole render (sharp's `timeout` for each pipeline),
 * and the output size of the last operation.
 */
import { AppError } from '../core/errors.js';
import { imageErrors } from '../core/error-catalogue/media.js';

/** Processable input resolution; larger images can only be delivered as they are. */
export const MAX_INPUT_PIXELS = 75_000_000;
/** Pixels of any intermediate image (a stage is refused before it is committed): the input limit. */
export const MAX_INTERMEDIATE_PIXELS = MAX_INPUT_PIXELS;
/**
 * Operations in one CDN URL (`@` tags not counted). Real URLs use a handful; a longer chain is
 * refused from the plan, before any byte is read, since every operation may cost a full pass.
 */
export const MAX_OPERATIONS = 32;
/** Wall-clock time of one render, decoding included (gif2video has its own VIDEO_TIMEOUT_MS). */
export const RENDER_TIMEOUT_MS = 20_000;
/** Largest pixel value accepted in any URL parameter; output caps are checked on the result. */
export const MAX_PARAM_PX = 16384;
/** Output dimensions of the last operation. */
export const MAX_OUTPUT = { width: 3000, height: 3000 } as const;
/** Output dimensions when `-/format/jpeg/` is set explicitly. */
export const MAX_OUTPUT_JPEG = { width: 5000, height: 5000 } as const;
/** Implicit preview box added when no sizing operation is present (processing rule 1). */
export const IMPLICIT_PREVIEW = { width: 2048, height: 2048 } as const;
/** Bytes of an SVG we parse as text (sanitising reads it whole). */
export const MAX_SVG_BYTES = 10 * 1024 * 1024;
/** SVGs up to this size are sanitised on the main thread (a few ms); larger ones in a worker thread. */
export const INLINE_SVG_BYTES = 32 * 1024;
/**
 * Element nesting an SVG may have. The namespace-aware parser resolves each element's namespace by
 * walking up its open ancestors, so cost grows with depth times elements: 20,000 nested groups
 * (140 KB) held the main thread for 2.8 s. Real drawings nest a few dozen levels.
 */
export const MAX_SVG_DEPTH = 128;
/**
 * Elements of an SVG we rasterize (librsvg's parse alone took 45 s for 200,000 circles); a larger
 * one can still be delivered as SVG.
 */
export const MAX_SVG_RASTER_ELEMENTS = 50_000;
/** JS heap of the SVG rasterizer child process (librsvg's own memory is bounded by the 75 Mpx limit). */
export const SVG_CHILD_HEAP_MB = 128;
/** Bytes of a non-sharp input (BMP, PCX, TGA, HEIC) read into memory for decoding. */
export const MAX_DECODER_INPUT_BYTES = 300 * 1024 * 1024;
/** Pixel maps over at most this many pixels run inline (a few ms); larger ones in a worker thread. */
export const INLINE_PIXEL_MAP_PIXELS = 1_000_000;
/** JS heap of one decoder worker thread (pixel buffers are bounded by MAX_INPUT_PIXELS instead). */
export const DECODER_HEAP_MB = 256;
/** Time limit of a decode or header read in a worker outside a render (upload inspection). */
export const DECODE_TIMEOUT_MS = 20_000;
/** gif2video: frames and wall time of one ffmpeg run. */
export const MAX_VIDEO_FRAMES = 3000;
export const VIDEO_TIMEOUT_MS = 60_000;

/**
 * Refuses an image whose header declares more than MAX_INPUT_PIXELS (or no usable size),
 * before a single pixel is decoded.
 */
export function checkInputHeader(dims: { width?: number | undefined; height?: number | undefined }): void {
  const { width, height } = dims;
  if (!width || !height || width < 1 || height < 1 || !Number.isFinite(width) || !Number.isFinite(height)) {
    throw imageErrors.noDimensions();
  }
  if (width * height > MAX_INPUT_PIXELS) {
    throw imageErrors.tooLarge(
      `Image is ${width}x${height} (${Math.round((width * height) / 1e6)} Mpx), above the ${MAX_INPUT_PIXELS / 1e6} Mpx processing limit; it can only be delivered as is.`,
    );
  }
}

export function outputCap(explicitJpeg: boolean): { width: number; height: number } {
  return explicitJpeg ? MAX_OUTPUT_JPEG : MAX_OUTPUT;
}

export function checkOutput(width: number, height: number, explicitJpeg: boolean): void {
  const cap = outputCap(explicitJpeg);
  if (width > cap.width || height > cap.height) {
    throw imageErrors.outputTooLarge(
      `Output dimensions ${width}x${height} exceed the ${cap.width}x${cap.height} limit${explicitJpeg ? ' for explicit jpeg' : ' (5000x5000 with -/format/jpeg/)'}.`,
    );
  }
}

const mpx = (pixels: number): string => `${Math.round(pixels / 1e6)} Mpx`;

/** Refuses from the plan alone a size an operation asks for that no intermediate may have. */
export function checkRequestedSize(op: string, width: number, height: number): void {
  if (width * height > MAX_INTERMEDIATE_PIXELS) {
    throw imageErrors.invalidOperation(
      `Invalid operation "${op}": ${width}x${height} (${mpx(width * height)}) is above the ${mpx(MAX_INTERMEDIATE_PIXELS)} limit for any image being processed.`);
  }
}

/** Refuses a stage that would hold more than MAX_INTERMEDIATE_PIXELS, before any of its pixels exist. */
export function checkIntermediate(width: number, height: number): void {
  if (width * height > MAX_INTERMEDIATE_PIXELS) {
    throw imageErrors.tooLarge(
      `An operation would make a ${width}x${height} image (${mpx(width * height)}), above the ${mpx(MAX_INTERMEDIATE_PIXELS)} processing limit.`);
  }
}

export function checkChainLength(count: number): void {
  if (count > MAX_OPERATIONS) {
    throw imageErrors.invalidOperation(`Too many operations: ${count}, at most ${MAX_OPERATIONS} in one URL.`);
  }
}

export function renderTimeout(ms: number): AppError {
  return imageErrors.timeout(`Processing this image took longer than the ${ms / 1000} s limit; use fewer or smaller operations.`);
}

/** The time left to one render; every sharp pipeline of it gets the remainder as its timeout. */
export class Deadline {
  private readonly end: number;
  constructor(readonly ms: number) {
    this.end = Date.now() + ms;
  }

  remainingMs(): number {
    return this.end - Date.now();
  }

  /** For sharp's `timeout`, which counts whole seconds (0 would mean none). */
  seconds(): number {
    return Math.max(1, Math.ceil(this.remainingMs() / 1000));
  }

  check(): void {
    if (this.remainingMs() <= 0) throw renderTimeout(this.ms);
  }

  /** `work`, or a timeout error once the deadline passes (the abandoned work is stopped by its own timeouts). */
  race<T>(work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(renderTimeout(this.ms)), Math.max(0, this.remainingMs()));
    });
    // An abandoned render still settles later; its error has no one left to tell.
    work.catch(() => undefined);
    return Promise.race([work, late]).finally(() => clearTimeout(timer));
  }
}
