/**
 * Photo-like images of the sizes clients upload (a phone's 12 Mpx JPEG down to a thumbnail), made
 * with sharp in the test process: gradients, soft shapes and sensor-like noise, so they compress
 * like photos (a few bits per pixel) and decode, resize and encode at a photo's real cost.
 */
import sharp from 'sharp';
import { Random } from './random.js';
import type { Sample } from './images.js';

function photoPixels(w: number, h: number, rnd: Random): Buffer {
  const px = Buffer.alloc(w * h * 3);
  const fx = 60 + rnd.int(0, 80);
  const fy = 50 + rnd.int(0, 60);
  const clamp = (v: number) => (v < 0 ? 0 : v > 255 ? 255 : v);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const o = (y * w + x) * 3;
      const n = (rnd.next() - 0.5) * 16;
      const blob = 60 * Math.sin((x / fx) * (2000 / w)) * Math.cos((y / fy) * (1500 / h));
      px[o] = clamp((x / w) * 200 + blob + n + 20);
      px[o + 1] = clamp((y / h) * 180 - blob / 2 + n + 30);
      px[o + 2] = clamp(140 + 50 * Math.sin(((x + y) / 150) * (2000 / w)) + n);
    }
  }
  return px;
}

/** Shapes and encodings: most JPEG, some PNG and WebP; 0.3 to 12 Mpx. */
const PHOTOS: ReadonlyArray<{ w: number; h: number; format: 'jpeg' | 'png' | 'webp' }> = [
  { w: 4000, h: 3000, format: 'jpeg' },
  { w: 3000, h: 2000, format: 'jpeg' },
  { w: 2000, h: 1500, format: 'jpeg' },
  { w: 1500, h: 2000, format: 'jpeg' },
  { w: 1280, h: 960, format: 'jpeg' },
  { w: 800, h: 600, format: 'jpeg' },
  { w: 1600, h: 1200, format: 'webp' },
  { w: 1200, h: 900, format: 'png' },
  { w: 640, h: 480, format: 'png' },
];

export async function photoSamples(seed: number): Promise<Sample[]> {
  const rnd = new Random(seed);
  const out: Sample[] = [];
  for (const { w, h, format } of PHOTOS) {
    const img = sharp(photoPixels(w, h, rnd), { raw: { width: w, height: h, channels: 3 } }).blur(0.6);
    const data = await (format === 'jpeg' ? img.jpeg({ quality: 88 }) : format === 'png' ? img.png() : img.webp({ quality: 85 })).toBuffer();
    out.push({ name: `photo-${w}x${h}.${format === 'jpeg' ? 'jpg' : format}`, type: `image/${format}`, data });
  }
  return out;
}
