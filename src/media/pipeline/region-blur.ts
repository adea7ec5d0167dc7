/**
 * `blur_region` as a pixel step: a gaussian blur of some boxes of the image, the rest untouched.
 * It runs wherever the stage runs its pixel steps (pixel-step.ts): inline for a small image, in a
 * worker thread on scratch files for a large one, so a 74 Mpx image's pixels never sit in a
 * main-thread buffer (docs/reliability.md). Only `import type` of sharp: the caller's constructor is used.
 */
import { intersect } from './place.js';
import type { RawImage } from './pixels.js';
import { type CreateSharp, blurRaw } from './gaussian.js';

export interface Box { left: number; top: number; width: number; height: number }

/**
 * Blurs each box of `img` in place. The boxes were placed on the stage's size, which an
 * estimate (free-angle rotation) can miss by a pixel: each is cut to the real image here.
 */
export async function blurBoxes(create: CreateSharp, img: RawImage, boxes: readonly Box[], sigma: number): Promise<RawImage> {
  for (const b of boxes) {
    const box = intersect(b.left, b.top, b.width, b.height, img.width, img.height);
    if (box) await blurBox(create, img, box, sigma);
  }
  return img;
}

/** Blurs one box of `img` in place (the copy in and out are row memcpys; libvips blurs). */
async function blurBox(create: CreateSharp, img: RawImage, box: Box, sigma: number): Promise<void> {
  const c = img.channels;
  const region = Buffer.alloc(box.width * box.height * c);
  for (let y = 0; y < box.height; y++) {
    const from = ((box.top + y) * img.width + box.left) * c;
    img.data.copy(region, y * box.width * c, from, from + box.width * c);
  }
  const blurred = await blurRaw(create, { data: region, width: box.width, height: box.height, channels: c }, sigma);
  for (let y = 0; y < box.height; y++) {
    blurred.copy(img.data, ((box.top + y) * img.width + box.left) * c, y * box.width * c, (y + 1) * box.width * c);
  }
}
