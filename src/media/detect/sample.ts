/**
 * What the detectors see: a copy of the image as 8-bit RGB, downscaled by libvips (off the main
 * thread) to at most DETECT_MAX_SIDE, with the factor that maps its boxes back.
 */
import type { Sharp } from 'sharp';
import sharp from '../lazy-sharp.js';
import { DETECT_MAX_SIDE, type RgbImage } from './pool.js';
import type { Detection } from './types.js';

export async function rgbOf(img: Sharp, width: number, height: number, maxSide = DETECT_MAX_SIDE, exact?: { w: number; h: number }): Promise<RgbImage> {
  const k = Math.min(1, maxSide / Math.max(width, height));
  const w = exact?.w ?? Math.max(1, Math.round(width * k));
  const h = exact?.h ?? Math.max(1, Math.round(height * k));
  const { data, info } = await img.resize({ width: w, height: h, fit: 'fill' })
    .flatten({ background: '#ffffff' }).toColourspace('srgb').raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true });
  if (info.channels === 3) return { data, width: info.width, height: info.height };
  // A greyscale pipeline stays one band whatever colourspace is asked: libvips copies it thrice.
  const grey = info.channels === 1 ? data : await sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } }).extractChannel(0).raw().toBuffer();
  const raw = { width: info.width, height: info.height, channels: 1 as const };
  const rgb = await sharp(grey, { raw }).joinChannel([grey, grey], { raw }).raw().toBuffer();
  return { data: rgb, width: info.width, height: info.height };
}

/** Boxes found on a `from`-sized copy, in pixels of a `to`-sized image. */
export function scaleBoxes(found: readonly Detection[], from: { width: number; height: number }, to: { width: number; height: number }): Detection[] {
  const kx = to.width / from.width;
  const ky = to.height / from.height;
  return found.map((d) => {
    const x = Math.round(d.x * kx);
    const y = Math.round(d.y * ky);
    return { ...d, x, y, width: Math.max(1, Math.min(to.width - x, Math.round(d.width * kx))), height: Math.max(1, Math.min(to.height - y, Math.round(d.height * ky))) };
  });
}
