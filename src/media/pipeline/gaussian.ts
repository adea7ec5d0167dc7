/**
 * Gaussian blur of raw 8-bit pixels, shared by the pixel steps that blur (pixel-step.ts: `blur`
 * and its unsharp mask; region-blur.ts: `blur_region`). Only `import type` of sharp: whoever runs
 * the step hands in its sharp constructor (the stage's bounds its pipelines by the deadline).
 */
import type { Sharp, SharpOptions } from 'sharp';
import type { RawImage } from './pixels.js';

/** The sharp constructor of whoever runs the step. */
export type CreateSharp = (input?: Buffer, options?: SharpOptions) => Sharp;

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
