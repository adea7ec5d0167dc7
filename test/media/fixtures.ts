/**
 * Synthetic fixtures for the media tests, written to a temp dir. Formats sharp cannot write
 * (BMP, PCX, TGA) have small hand-written encoders here; HEIC ships as fixtures/sample.heic
 * (32x24 solid rgb(200,30,40), made with `heif-enc -q 50` from Debian's libheif-examples).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';

export const DIR = mkdtempSync(join(tmpdir(), 'stowage-media-'));
export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

export interface Rgb { r: number; g: number; b: number }
export const RED: Rgb = { r: 255, g: 0, b: 0 };
export const GREEN: Rgb = { r: 0, g: 255, b: 0 };
export const BLUE: Rgb = { r: 0, g: 0, b: 255 };
export const WHITE: Rgb = { r: 255, g: 255, b: 255 };

function save(name: string, data: Buffer | string): string {
  const p = join(DIR, name);
  writeFileSync(p, data);
  return p;
}

/** RGB pixels: quadrants red (top-left), green (top-right), blue (bottom-left), white (bottom-right). */
export function quadrantPixels(w: number, h: number): Buffer {
  const data = Buffer.alloc(w * h * 3);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const c = y < h / 2 ? (x < w / 2 ? RED : GREEN) : x < w / 2 ? BLUE : WHITE;
      data.set([c.r, c.g, c.b], (y * w + x) * 3);
    }
  }
  return data;
}

export async function quadrants(w = 200, h = 100, format: 'png' | 'jpeg' = 'png'): Promise<string> {
  const img = sharp(quadrantPixels(w, h), { raw: { width: w, height: h, channels: 3 } });
  return save(`quad-${w}x${h}.${format}`, await (format === 'png' ? img.png() : img.jpeg({ quality: 95 })).toBuffer());
}

export async function solid(w: number, h: number, c: Rgb, format: 'png' | 'jpeg' | 'webp' | 'avif' | 'tiff' | 'gif' = 'png'): Promise<string> {
  const buf = await sharp({ create: { width: w, height: h, channels: 3, background: c } }).toFormat(format).toBuffer();
  return save(`solid-${w}x${h}-${c.r}-${c.g}-${c.b}.${format}`, buf);
}

/** Colourful gradient: a stand-in photo with distinct channels everywhere. */
export async function gradient(w = 120, h = 80): Promise<string> {
  const data = Buffer.alloc(w * h * 3);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) data.set([(x * 255) / w, (y * 255) / h, 128], (y * w + x) * 3);
  return save(`grad-${w}x${h}.png`, await sharp(data, { raw: { width: w, height: h, channels: 3 } }).png().toBuffer());
}

/** JPEG 60x40 whose EXIF says orientation 6 (display rotated 90° clockwise), with a camera make and GPS. */
export async function exifJpeg(): Promise<string> {
  const buf = await sharp(quadrantPixels(60, 40), { raw: { width: 60, height: 40, channels: 3 } })
    .withExif({
      IFD0: { Make: 'StowageCam' },
      IFD2: { DateTimeOriginal: '2021:05:06 07:08:09' },
      IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 30/1', GPSLongitudeRef: 'E', GPSLongitude: '2/1 21/1 0/1' },
    })
    .withMetadata({ orientation: 6 })
    .jpeg()
    .toBuffer();
  return save('exif.jpg', buf);
}

/** Two-frame animated GIF 40x30: red frame then blue frame. */
export async function animatedGif(): Promise<string> {
  const w = 40, h = 30;
  const data = Buffer.alloc(w * h * 2 * 3);
  for (let i = 0; i < w * h * 2; i++) data.set(i < w * h ? [255, 0, 0] : [0, 0, 255], i * 3);
  const buf = await sharp(data, { raw: { width: w, height: h * 2, channels: 3, pageHeight: h } }).gif({ delay: [100, 100] }).toBuffer();
  return save('anim.gif', buf);
}

/** 24-bit BI_RGB BMP, bottom-up rows padded to 4 bytes. */
export function bmp(w: number, h: number, c: Rgb): string {
  const stride = Math.ceil((w * 3) / 4) * 4;
  const b = Buffer.alloc(54 + stride * h);
  b.write('BM', 0, 'latin1');
  b.writeUInt32LE(b.length, 2);
  b.writeUInt32LE(54, 10);
  b.writeUInt32LE(40, 14);
  b.writeInt32LE(w, 18);
  b.writeInt32LE(h, 22);
  b.writeUInt16LE(1, 26);
  b.writeUInt16LE(24, 28);
  b.writeUInt32LE(stride * h, 34);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) b.set([c.b, c.g, c.r], 54 + y * stride + x * 3);
  return save(`img-${w}x${h}.bmp`, b);
}

/** BMP header declaring a huge size with almost no data: a decompression bomb. */
export function bmpBomb(): string {
  const b = Buffer.from(readFileSync(bmp(2, 2, RED)));
  b.writeInt32LE(20000, 18);
  b.writeInt32LE(20000, 22);
  return save('bomb.bmp', b);
}

/** Uncompressed true-colour TGA (type 2, 24-bit, top-left origin). */
export function tga(w: number, h: number, c: Rgb): string {
  const b = Buffer.alloc(18 + w * h * 3);
  b[2] = 2;
  b.writeUInt16LE(w, 12);
  b.writeUInt16LE(h, 14);
  b[16] = 24;
  b[17] = 0x20; // top-left origin
  for (let i = 0; i < w * h; i++) b.set([c.b, c.g, c.r], 18 + i * 3);
  return save(`img-${w}x${h}.tga`, b);
}

/** 24-bit PCX (8 bits x 3 planes), RLE encoded. */
export function pcx(w: number, h: number, c: Rgb): string {
  const stride = w + (w % 2);
  const header = Buffer.alloc(128);
  header[0] = 0x0a; header[1] = 5; header[2] = 1; header[3] = 8;
  header.writeUInt16LE(w - 1, 8);
  header.writeUInt16LE(h - 1, 10);
  header.writeUInt16LE(72, 12); header.writeUInt16LE(72, 14);
  header[65] = 3;
  header.writeUInt16LE(stride, 66);
  header.writeUInt16LE(1, 68);
  const body: number[] = [];
  for (let y = 0; y < h; y++) {
    for (const v of [c.r, c.g, c.b]) {
      let left = stride;
      while (left > 0) {
        const n = Math.min(63, left);
        body.push(0xc0 | n, v);
        left -= n;
      }
    }
  }
  return save(`img-${w}x${h}.pcx`, Buffer.concat([header, Buffer.from(body)]));
}

export function svg(name: string, text: string): string {
  return save(name, text);
}

export function file(name: string, data: Buffer | string): string {
  return save(name, data);
}

