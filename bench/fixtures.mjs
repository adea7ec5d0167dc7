// Bench inputs: a photo-like 2000x1500 JPEG (gradients, soft shapes and sensor-like noise) and
// incompressible 10 KiB and 1 MiB files.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';

export async function makeFixtures(dir) {
  const w = 2000, h = 1500;
  const px = Buffer.alloc(w * h * 3);
  const rnd = crypto.randomBytes(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      const n = (rnd[i] - 128) / 8;
      const blob = 60 * Math.sin(x / 97) * Math.cos(y / 71);
      px[i * 3] = clamp((x / w) * 200 + blob + n + 20);
      px[i * 3 + 1] = clamp((y / h) * 180 - blob / 2 + n + 30);
      px[i * 3 + 2] = clamp(140 + 50 * Math.sin((x + y) / 150) + n);
    }
  }
  const photo = await sharp(px, { raw: { width: w, height: h, channels: 3 } }).blur(0.6).jpeg({ quality: 88 }).toBuffer();
  fs.writeFileSync(path.join(dir, 'photo.jpg'), photo);
  fs.writeFileSync(path.join(dir, 'small.bin'), crypto.randomBytes(10 * 1024));
  fs.writeFileSync(path.join(dir, 'big.bin'), crypto.randomBytes(1024 * 1024));
  return { photo: photo.length };
}

function clamp(v) {
  return Math.max(0, Math.min(255, Math.round(v)));
}
