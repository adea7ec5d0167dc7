/**
 * Real images for the fuzzers, made with sharp in the test process: the formats clients upload
 * most (JPEG, PNG with alpha, animated GIF, SVG, WebP, TIFF) plus borderline shapes (1x1, a 2000x1
 * strip, 16-bit grey, CMYK JPEG) and a non-image.
 */
import sharp from 'sharp';
import type { ProjectKeys, TestServer } from '../helpers/server.js';
import { uploadBase } from '../helpers/rest.js';

export interface Sample {
  name: string;
  data: Buffer;
  type: string;
}

function noiseRgb(w: number, h: number, channels: 3 | 4): Buffer {
  const data = Buffer.alloc(w * h * channels);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const o = (y * w + x) * channels;
      data[o] = (x * 255) / w;
      data[o + 1] = (y * 255) / h;
      data[o + 2] = (x * y) % 256;
      // A transparent hole and a half-transparent band: alpha that matters.
      if (channels === 4) data[o + 3] = x > w / 3 && x < w / 2 ? 0 : y < h / 4 ? 128 : 255;
    }
  }
  return data;
}

const SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="120" height="80" viewBox="0 0 120 80">
<defs><linearGradient id="g"><stop offset="0" stop-color="#f00"/><stop offset="1" stop-color="#00f"/></linearGradient></defs>
<rect width="120" height="80" fill="url(#g)"/><circle cx="60" cy="40" r="30" fill="#fff" fill-opacity="0.5"/>
<text x="10" y="70" font-size="12">Stowage</text></svg>`;

export async function fuzzSamples(): Promise<Sample[]> {
  const rgb = (w: number, h: number) => sharp(noiseRgb(w, h, 3), { raw: { width: w, height: h, channels: 3 } });
  const frames = (w: number, h: number, n: number) =>
    sharp(Buffer.concat(Array.from({ length: n }, (_, i) => noiseRgb(w, h, 3).map((v) => (v + i * 80) % 256))), {
      raw: { width: w, height: h * n, channels: 3, pageHeight: h },
    });
  return [
    { name: 'photo.jpg', type: 'image/jpeg', data: await rgb(640, 480).withMetadata({ orientation: 6 }).jpeg({ quality: 85 }).toBuffer() },
    { name: 'alpha.png', type: 'image/png', data: await sharp(noiseRgb(300, 200, 4), { raw: { width: 300, height: 200, channels: 4 } }).png().toBuffer() },
    { name: 'anim.gif', type: 'image/gif', data: await frames(120, 90, 3).gif({ delay: [80, 80, 80] }).toBuffer() },
    { name: 'drawing.svg', type: 'image/svg+xml', data: Buffer.from(SVG) },
    { name: 'pic.webp', type: 'image/webp', data: await rgb(200, 150).webp().toBuffer() },
    { name: 'scan.tiff', type: 'image/tiff', data: await rgb(160, 120).tiff().toBuffer() },
    { name: 'dot.png', type: 'image/png', data: await rgb(1, 1).png().toBuffer() },
    { name: 'strip.png', type: 'image/png', data: await rgb(2000, 1).png().toBuffer() },
    { name: 'grey16.png', type: 'image/png', data: await rgb(64, 64).grayscale().png().toColourspace('grey16').toBuffer() },
    { name: 'cmyk.jpg', type: 'image/jpeg', data: await rgb(100, 80).toColourspace('cmyk').jpeg().toBuffer() },
    { name: 'notes.txt', type: 'text/plain', data: Buffer.from('not an image\n') },
  ];
}

/** Uploads and stores each sample; returns name -> uuid. */
export async function uploadSamples(server: TestServer, keys: ProjectKeys, samples: readonly Sample[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const s of samples) {
    const r = await uploadBase(server.upload, keys.public_key, [{ name: s.name, data: s.data, type: s.type }], { UPLOADCARE_STORE: '1' });
    if (r.status !== 200) throw new Error(`upload of ${s.name} failed: ${r.status} ${r.text}`);
    out.set(s.name, r.json.file as string);
  }
  return out;
}
