/**
 * A pixel step of the stage: a pixel map (pixels.ts), a gaussian blur with or without an unsharp
 * mask, a blur of some boxes (`blur_region`), a trim or an overlay's opacity, over 8-bit sRGB pixels. The same code runs
 * inline on the main thread for small images and in a worker thread on scratch files for large
 * ones (pixel-file.ts), so both give the same bytes. Every step is plain data (it is sent to the
 * worker). Only `import type` of sharp: the caller hands in its sharp constructor.
 */
import type { Sharp } from 'sharp';
import { type PixelKernel, type RawImage, applyKernel, widenGrey } from './pixels.js';
import { type CreateSharp, blurRaw } from './gaussian.js';
import { type Box, blurBoxes } from './region-blur.js';
import { trimRaw } from './trim-step.js';
import { fade } from './fade.js';

/**
 * What an operation asks of the pixels; an unsharp mask is a blur with an amount. `blur-boxes`
 * and `trim` read the whole image too, so they take the same route as the maps; `fade` is an
 * overlay's opacity, run on the overlay's pixels (state.ts `drawOver`).
 */
export type PixelStep =
  | Exclude<PixelKernel, { kind: 'unsharp' }>
  | { kind: 'blur'; sigma: number; amount: number | null }
  | { kind: 'blur-boxes'; sigma: number; boxes: readonly Box[] }
  | { kind: 'trim'; threshold: number }
  | { kind: 'fade'; opacity: number };

/**
 * 8-bit sRGB pixels of a pipeline, and `grey` when sharp answered one or two bands: its raw output
 * of a pipeline with greyscale queued keeps only the first band, whatever colourspace is asked.
 */
export async function srgbPixels(img: Sharp): Promise<{ raw: RawImage; grey: 1 | 2 | null }> {
  const { data, info } = await img.toColourspace('srgb').raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true });
  const { width, height } = info;
  if (info.channels >= 3) return { raw: { data, width, height, channels: info.channels >= 4 ? 4 : 3 }, grey: null };
  const grey = info.channels === 2 ? 2 : 1;
  return { raw: { data, width, height, channels: grey === 2 ? 4 : 3 }, grey };
}

/** `srgbPixels` with the grey widening done here (a worker thread, or an image small enough to loop over inline). */
export async function srgbRaw(img: Sharp): Promise<RawImage> {
  const px = await srgbPixels(img);
  return px.grey === null ? px.raw : { ...px.raw, data: widenGrey(px.raw.data, px.grey) };
}

/** Applies `step` to `img` (pixel maps in place). */
export async function runStep(img: RawImage, step: PixelStep, create: CreateSharp): Promise<RawImage> {
  if (step.kind === 'blur-boxes') return blurBoxes(create, img, step.boxes, step.sigma);
  if (step.kind === 'trim') return trimRaw(create, img, step.threshold);
  if (step.kind === 'fade') return fade(img, step.opacity);
  if (step.kind !== 'blur') return applyKernel(img, step);
  const blurred = await blurRaw(create, img, step.sigma);
  if (step.amount === null) return { ...img, data: blurred };
  return applyKernel(img, { kind: 'unsharp', blurred, amount: step.amount });
}
