/**
 * Real photographs for the detector tests, cut from the sample images @vladmandic/human ships in
 * its npm package (MIT, assets/): nothing is downloaded, and what is in them is known.
 */
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';

const require = createRequire(import.meta.url);
const assets = path.join(path.dirname(require.resolve('@vladmandic/human')), '..', 'assets');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-photos-'));

/** Where the face sits in `facePhoto()`: the portrait pasted at this place, this size. */
export const FACE_AT = { left: 700, top: 160, size: 420 } as const;
export const FACE_PHOTO_SIZE = { width: 1200, height: 800 } as const;

/**
 * A 1200x800 JPEG: grey wall, one man's head-and-shoulders portrait (the faceid demo's camera
 * picture, 140 px, enlarged to 420) pasted at FACE_AT. The face is inside that square.
 */
export async function facePhoto(): Promise<string> {
  const out = path.join(dir, 'face.jpg');
  if (fs.existsSync(out)) return out;
  const portrait = await sharp(path.join(assets, 'screenshot-faceid.jpg'))
    .extract({ left: 14, top: 142, width: 140, height: 140 }).resize(FACE_AT.size, FACE_AT.size).toBuffer();
  await sharp({ create: { ...FACE_PHOTO_SIZE, channels: 3, background: { r: 128, g: 128, b: 128 } } })
    .composite([{ input: portrait, left: FACE_AT.left, top: FACE_AT.top }]).jpeg({ quality: 90 }).toFile(out);
  return out;
}

/** A photo without any face or object: a smooth colour gradient. */
export async function emptyPhoto(): Promise<string> {
  const out = path.join(dir, 'empty.jpg');
  if (fs.existsSync(out)) return out;
  const w = 600, h = 400;
  const px = Buffer.alloc(w * h * 3);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) { const o = (y * w + x) * 3; px[o] = 40 + (x * 150) / w; px[o + 1] = 90; px[o + 2] = 200 - (y * 120) / h; }
  await sharp(px, { raw: { width: w, height: h, channels: 3 } }).jpeg().toFile(out);
  return out;
}

/**
 * A man in a suit at a dinner table (the third thumbnail of the library's samples.jpg), 600x451:
 * one person, one face.
 */
export async function dinnerPhoto(): Promise<string> {
  const out = path.join(dir, 'dinner.jpg');
  if (fs.existsSync(out)) return out;
  await sharp(path.join(assets, 'samples.jpg')).extract({ left: 325, top: 0, width: 210, height: 158 }).resize(600).jpeg().toFile(out);
  return out;
}
