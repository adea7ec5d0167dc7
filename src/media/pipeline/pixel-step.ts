/**
 * A pixel step of the stage: a pixel map (pixels.ts) or a gaussian blur, with or without an
 * unsharp mask, over 8-bit sRGB pixels. The same code runs inline on the main thread for small
 * images and in a worker thread on scratch files for large ones (pixel-file.ts), so both give the
 * same bytes. Only `import type` of sharp: the caller hands in its sharp constructor.
 */
import type { Sharp, SharpOptions } from 'sharp';
import { type PixelKernel, type RawImage, applyKernel, widenGrey } from './pixels.js';

/** The sharp constructor of whoever runs the step (the stage's bounds its pipelines by the deadline). */
export type CreateSharp = (input?: Buffer, options?: SharpOptions) => Sharp;

/** What an operation asks of the pixels; an unsharp mask is a blur with an amount. */
export type PixelStep = Exclude<PixelKernel, { kind: 'unsharp' }> | { kind: 'blur'; sigma: number; amount: number | null };

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

/** Gaussian blur of raw pixels. Very wide blurs run on a downscaled copy: same look, bounded CPU. */
export async function blurRaw(create: CreateSharp, img: RawImage, sigma: number): Promise<Buffer> {
  const { width, height, channels } = img;
  const raw = { width, height, channels };
  if (sigma <= 20) {
    return create(img.data, { raw }).blur(sigma).raw().toBuffer();
  }
  const f = sigma / 20;
  const sw = Math.max(1, Math.round(width / f));
  const sh = Math.max(1, Math.round(height / f));
  const small = await create(img.data, { raw }).resize({ width: sw, height: sh, fit: 'fill' }).blur(20).raw().toBuffer();
  return create(small, { raw: { width: sw, height: sh, channels } }).resize({ width, height, fit: 'fill' }).raw().toBuffer();
}

/** Applies `step` to `img` (pixel maps in place). */
export async function runStep(img: RawImage, step: PixelStep, create: CreateSharp): Promise<RawImage> {
  if (step.kind !== 'blur') return applyKernel(img, step);
  const blurred = await blurRaw(create, img, step.sigma);
  if (step.amount === null) return { ...img, data: blurred };
  return applyKernel(img, { kind: 'unsharp', blurred, amount: step.amount });
}
