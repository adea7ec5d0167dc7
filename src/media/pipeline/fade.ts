/**
 * An overlay's opacity as a pixel step: its alpha scaled by `opacity`. Run wherever the stage runs
 * the overlay's pixels (state.ts `drawOver`): inline for a small overlay, in a worker thread on
 * scratch files for a large one, where a loop over 74 M alpha values would hold the main thread.
 */
import type { RawImage } from './pixels.js';

/** Scales the alpha of RGBA pixels in place; RGB pixels (no alpha) are left as they are. */
export function fade(img: RawImage, opacity: number): RawImage {
  if (img.channels !== 4) return img;
  const d = img.data;
  for (let i = 3; i < d.length; i += 4) d[i] = Math.round(d[i]! * opacity);
  return img;
}
