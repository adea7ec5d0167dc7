/**
 * Processing limits (cdn-url-api.md "Limits"), checked in layers: declared header dimensions
 * before any decode (decompression bombs), sharp's own limitInputPixels as a second fence, and
 * the output size of the last operation.
 */
import { AppError } from '../core/errors.js';

/** Processable input resolution; larger images can only be delivered as they are. */
export const MAX_INPUT_PIXELS = 75_000_000;
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
/** Bytes of a non-sharp input (BMP, PCX, TGA, HEIC) read into memory for decoding. */
export const MAX_DECODER_INPUT_BYTES = 300 * 1024 * 1024;
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
    throw new AppError(400, 'InvalidImage', 'Not supported for files that are not images: no image dimensions found.');
  }
  if (width * height > MAX_INPUT_PIXELS) {
    throw new AppError(
      400,
      'ImageTooLarge',
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
    throw new AppError(
      400,
      'OutputTooLarge',
      `Output dimensions ${width}x${height} exceed the ${cap.width}x${cap.height} limit${explicitJpeg ? ' for explicit jpeg' : ' (5000x5000 with -/format/jpeg/)'}.`,
    );
  }
}
