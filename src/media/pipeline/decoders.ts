/**
 * Input formats sharp's prebuilt libvips does not read: BMP (decode-bmp), TGA (tga-js),
 * HEIC (heic-decode, libheif compiled to wasm inside the package) and PCX (decoded here: no
 * maintained npm decoder exists). Each reads its header size first so decompression bombs are
 * refused before decoding; every decoder yields 8-bit RGBA for sharp's raw input.
 */
import { createRequire } from 'node:module';
import { AppError } from '../../core/errors.js';
import { checkInputHeader } from '../limits.js';
import { imageErrors } from '../../core/error-catalogue/media.js';

export type InputKind = 'sharp' | 'svg' | OtherKind;
/** Formats decoded here (in the decode pool's worker threads), not by libvips. */
export type OtherKind = 'bmp' | 'pcx' | 'tga' | 'heic';
export const isOtherKind = (k: InputKind): k is OtherKind => k === 'bmp' || k === 'pcx' || k === 'tga' || k === 'heic';
export interface Rgba8 { data: Buffer; width: number; height: number }

const require = createRequire(import.meta.url);

const MIME_KINDS: Record<string, InputKind> = {
  'image/bmp': 'bmp', 'image/x-bmp': 'bmp', 'image/x-ms-bmp': 'bmp',
  'image/x-pcx': 'pcx', 'image/pcx': 'pcx', 'image/vnd.zbrush.pcx': 'pcx',
  'image/x-tga': 'tga', 'image/x-targa': 'tga', 'image/tga': 'tga', 'image/targa': 'tga',
  'image/heic': 'heic', 'image/heif': 'heic', 'image/heic-sequence': 'heic', 'image/heif-sequence': 'heic',
  'image/svg+xml': 'svg',
  'image/jpeg': 'sharp', 'image/png': 'sharp', 'image/gif': 'sharp', 'image/webp': 'sharp',
  'image/avif': 'sharp', 'image/tiff': 'sharp', 'image/jxl': 'sharp',
};

const HEIC_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'mif1', 'msf1']);

/**
 * Which decoder reads this file. Magic bytes win over the stored MIME type (it came from the
 * uploader); TGA has no magic, so it is trusted from the MIME type only.
 */
export function detectKind(mime: string, head: Buffer): InputKind | null {
  if (head.length >= 2 && head[0] === 0x42 && head[1] === 0x4d) return 'bmp';
  if (head.length >= 4 && head[0] === 0x0a && head[1]! <= 5 && head[2] === 1) return 'pcx';
  if (head.length >= 12 && head.toString('latin1', 4, 8) === 'ftyp') {
    const brand = head.toString('latin1', 8, 12);
    if (brand === 'avif' || brand === 'avis') return 'sharp';
    if (HEIC_BRANDS.has(brand)) return mime === 'image/avif' ? 'sharp' : 'heic';
  }
  const kind = MIME_KINDS[mime.split(';')[0]!.trim().toLowerCase()];
  if (kind) return kind;
  const text = head.toString('utf8', 0, Math.min(head.length, 512)).trimStart();
  if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!DOCTYPE svg[^>]*>\s*)?<svg[\s>]/i.test(text)) return 'svg';
  return null;
}

/** Dimensions as declared in the header (no decoding). */
export function headerSize(kind: 'bmp' | 'pcx' | 'tga', b: Buffer): { width: number; height: number } {
  if (b.length < 30) throw corrupt(kind, 'file too short');
  if (kind === 'bmp') return { width: Math.abs(b.readInt32LE(18)), height: Math.abs(b.readInt32LE(22)) };
  if (kind === 'tga') return { width: b.readUInt16LE(12), height: b.readUInt16LE(14) };
  return { width: b.readUInt16LE(8) - b.readUInt16LE(4) + 1, height: b.readUInt16LE(10) - b.readUInt16LE(6) + 1 };
}

function corrupt(kind: string, why: string): AppError {
  return imageErrors.invalid(`Cannot decode ${kind.toUpperCase()} image: ${why}.`);
}

export async function decodeOther(kind: OtherKind, b: Buffer): Promise<Rgba8> {
  try {
    if (kind === 'heic') return await decodeHeic(b);
    const size = headerSize(kind, b);
    checkInputHeader(size);
    if (kind === 'bmp') {
      const decodeBmp = require('decode-bmp') as (d: Uint8Array) => { width: number; height: number; data: Uint8ClampedArray };
      const img = decodeBmp(b);
      return { data: Buffer.from(img.data.buffer, img.data.byteOffset, img.data.byteLength), width: img.width, height: img.height };
    }
    if (b.length < minimumLength(kind, b, size)) throw corrupt(kind, `the file is too short for the ${size.width}x${size.height} its header declares`);
    if (kind === 'tga') return decodeTga(b, size);
    return decodePcx(b, size);
  } catch (e) {
    if (e instanceof AppError) throw e;
    throw corrupt(kind, (e as Error).message);
  }
}

/**
 * The fewest bytes that can hold the declared pixels: RLE packs at most 128 TGA pixels or 63 PCX
 * bytes per run. A 3 KB file declaring 8000x8000 is refused here, before a buffer of 64 Mpx is
 * allocated and a decoder walks it.
 */
function minimumLength(kind: 'tga' | 'pcx', b: Buffer, { width, height }: { width: number; height: number }): number {
  if (kind === 'pcx') {
    const lineBytes = b.readUInt16LE(66) * (b[65] ?? 1);
    return 128 + Math.ceil((lineBytes * height) / 63) * 2;
  }
  const bytesPerPixel = Math.max(1, Math.ceil((b[16] ?? 8) / 8));
  const colorMap = b[1] === 1 ? b.readUInt16LE(5) * Math.ceil((b[7] ?? 0) / 8) : 0;
  const header = 18 + (b[0] ?? 0) + colorMap;
  const pixels = width * height;
  const rle = (b[2] ?? 0) >= 9;
  return header + (rle ? Math.ceil(pixels / 128) * (1 + bytesPerPixel) : pixels * bytesPerPixel);
}

interface TgaLoader { load(d: Uint8Array): void; getImageData(d: { width: number; height: number; data: Uint8ClampedArray }): unknown }
function decodeTga(b: Buffer, { width, height }: { width: number; height: number }): Rgba8 {
  const mod = require('tga-js') as (new () => TgaLoader) & { default?: new () => TgaLoader };
  const Loader = mod.default ?? mod;
  const tga = new Loader();
  tga.load(new Uint8Array(b.buffer, b.byteOffset, b.byteLength));
  // Passing the target avoids tga-js reaching for `document`.
  const data = new Uint8ClampedArray(width * height * 4);
  tga.getImageData({ width, height, data });
  return { data: Buffer.from(data.buffer), width, height };
}

interface HeifImage { width: number; height: number; decode(): Promise<{ width: number; height: number; data: Uint8ClampedArray }> }
async function decodeHeic(b: Buffer): Promise<Rgba8> {
  const heic = require('heic-decode') as { all(o: { buffer: Uint8Array }): Promise<HeifImage[] & { dispose(): void }> };
  const images = await heic.all({ buffer: new Uint8Array(b.buffer, b.byteOffset, b.byteLength) });
  try {
    const first = images[0];
    if (!first) throw corrupt('heic', 'no image inside');
    checkInputHeader(first);
    const img = await first.decode();
    return { data: Buffer.from(img.data.buffer, img.data.byteOffset, img.data.byteLength), width: img.width, height: img.height };
  } finally {
    images.dispose();
  }
}

/** HEIC primary image size from its container (libheif parses the boxes; nothing is decoded). */
export async function heicSize(b: Buffer): Promise<{ width: number; height: number } | null> {
  const heic = require('heic-decode') as { all(o: { buffer: Uint8Array }): Promise<HeifImage[] & { dispose(): void }> };
  const images = await heic.all({ buffer: new Uint8Array(b.buffer, b.byteOffset, b.byteLength) });
  try {
    const first = images[0];
    return first ? { width: first.width, height: first.height } : null;
  } finally {
    images.dispose();
  }
}

/** ZSoft PCX: RLE scanlines of 1–4 planes at 1, 2, 4 or 8 bits; 16-colour header or 256-colour tail palette. */
export function decodePcx(b: Buffer, { width, height }: { width: number; height: number }): Rgba8 {
  if (b[0] !== 0x0a || b[2] !== 1) throw corrupt('pcx', 'not an RLE PCX file');
  const bpp = b[3]!;
  const planes = b[65]!;
  const stride = b.readUInt16LE(66);
  if (![1, 2, 4, 8].includes(bpp) || planes < 1 || planes > 4 || stride * 8 < width * bpp || stride > Math.ceil((width * bpp) / 8) + 4) throw corrupt('pcx', 'unsupported layout');
  const lineBytes = stride * planes;
  const rows = Buffer.alloc(lineBytes * height);
  let src = 128;
  for (let dst = 0; dst < rows.length;) {
    if (src >= b.length) throw corrupt('pcx', 'truncated pixel data');
    const c = b[src++]!;
    if ((c & 0xc0) === 0xc0) {
      const v = b[src++] ?? 0;
      rows.fill(v, dst, Math.min(rows.length, dst + (c & 0x3f)));
      dst += c & 0x3f;
    } else rows[dst++] = c;
  }
  const out = Buffer.alloc(width * height * 4);
  const tail = b.length >= 769 && b[b.length - 769] === 0x0c ? b.subarray(b.length - 768) : null;
  const palette = bpp === 8 && planes === 1 ? tail : b.subarray(16, 64);
  for (let y = 0; y < height; y++) {
    const line = y * lineBytes;
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      out[o + 3] = 255;
      if (bpp === 8 && planes >= 3) {
        for (let p = 0; p < planes; p++) out[o + p] = rows[line + p * stride + x]!;
        continue;
      }
      let index = 0;
      for (let p = 0; p < planes; p++) {
        const bit = x * bpp;
        const byte = rows[line + p * stride + (bit >> 3)]!;
        index |= ((byte >> (8 - bpp - (bit & 7))) & ((1 << bpp) - 1)) << (p * bpp);
      }
      if (bpp === 1 && planes === 1) { out.fill(index ? 255 : 0, o, o + 3); continue; }
      if (!palette) { out.fill(index, o, o + 3); continue; }
      out[o] = palette[index * 3] ?? 0; out[o + 1] = palette[index * 3 + 1] ?? 0; out[o + 2] = palette[index * 3 + 2] ?? 0;
    }
  }
  return { data: out, width, height };
}
