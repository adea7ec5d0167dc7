/**
 * `trim` as a pixel step: libvips cuts the border of the background colour (the top-left pixel's,
 * within `threshold`). It runs wherever the stage runs its pixel steps (pixel-step.ts): inline for
 * a small image, in a worker thread on scratch files for a large one, so only the trimmed size
 * comes back to the main thread, never the pixels (docs/reliability.md). Only `import type` of sharp.
 */
import type { RawImage } from './pixels.js';
import type { CreateSharp } from './gaussian.js';

export async function trimRaw(create: CreateSharp, img: RawImage, threshold: number): Promise<RawImage> {
  const { width, height, channels } = img;
  // A single-colour image comes back whole (libvips 8.18); any error is a real one and fails the
  // render, rather than passing for "nothing to trim" (it once hid deadline and memory errors).
  const { data, info } = await create(img.data, { raw: { width, height, channels } })
    .trim({ threshold }).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels === 4 ? 4 : 3 };
}
