/**
 * Opening a source as a sharp pipeline for any supported input format, with the input limits
 * checked from the header first. Used for the main image and for overlays.
 */
import { open } from 'node:fs/promises';
import sharp, { type Metadata } from 'sharp';
import { AppError } from '../../core/errors.js';
import { type InputKind, decodeOther, detectKind } from '../decoders.js';
import { MAX_DECODER_INPUT_BYTES, MAX_INPUT_PIXELS, MAX_SVG_BYTES, checkInputHeader } from '../limits.js';
import { sanitizeSvg } from './svg.js';
import type { LoadedImage } from './types.js';

export interface SourceFile { path: string; mime: string }
export interface Opened extends LoadedImage { kind: InputKind; format: string; meta: Metadata | null }

export const NOT_IMAGE = (): AppError => new AppError(400, 'NotAnImage', 'Not supported for files that are not images.');

export async function readHead(path: string, bytes = 4096): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    const { bytesRead } = await fh.read(buf, 0, bytes, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

export async function kindOf(src: SourceFile): Promise<InputKind> {
  const kind = detectKind(src.mime, await readHead(src.path));
  if (!kind) throw NOT_IMAGE();
  return kind;
}

async function readCapped(path: string, max: number): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    if ((await fh.stat()).size > max) throw new AppError(400, 'ImageTooLarge', `Input file is larger than ${max} bytes.`);
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}

export async function readSvg(path: string): Promise<string> {
  return sanitizeSvg((await readCapped(path, MAX_SVG_BYTES)).toString('utf8'));
}

export interface OpenOptions { autorotate: boolean; ignoreIcc: boolean }

/** Header check, then a lazy first-frame pipeline (animated images are processed as static). */
export async function openSource(src: SourceFile, opts: OpenOptions, kind?: InputKind): Promise<Opened> {
  kind ??= await kindOf(src);
  const base = { limitInputPixels: MAX_INPUT_PIXELS, pages: 1, failOn: 'error' as const };
  if (kind === 'bmp' || kind === 'pcx' || kind === 'tga' || kind === 'heic') {
    const rgba = await decodeOther(kind, await readCapped(src.path, MAX_DECODER_INPUT_BYTES));
    const { data, channels } = dropOpaqueAlpha(rgba.data);
    const img = sharp(data, { ...base, raw: { width: rgba.width, height: rgba.height, channels } });
    return { img, width: rgba.width, height: rgba.height, hasAlpha: channels === 4, kind, format: kind, meta: null };
  }
  // SVG is rendered from sanitised text held in memory, never from its path (no base directory).
  const input: string | Buffer = kind === 'svg' ? Buffer.from(await readSvg(src.path)) : src.path;
  let meta: Metadata;
  try {
    meta = await sharp(input, { limitInputPixels: false, pages: 1 }).metadata();
  } catch {
    throw NOT_IMAGE();
  }
  checkInputHeader({ width: meta.width, height: meta.pageHeight ?? meta.height });
  const img = sharp(input, { ...base, autoOrient: opts.autorotate, ignoreIcc: opts.ignoreIcc });
  const swap = opts.autorotate && (meta.orientation ?? 1) >= 5;
  const w = meta.width;
  const h = meta.pageHeight ?? meta.height;
  return { img, width: swap ? h : w, height: swap ? w : h, hasAlpha: meta.hasAlpha, kind, format: meta.format, meta };
}


/** Decoders always yield RGBA; a fully opaque image goes on as RGB so it encodes as JPEG by default. */
function dropOpaqueAlpha(rgba: Buffer): { data: Buffer; channels: 3 | 4 } {
  for (let i = 3; i < rgba.length; i += 4) if (rgba[i] !== 255) return { data: rgba, channels: 4 };
  const rgb = Buffer.alloc((rgba.length / 4) * 3);
  for (let i = 0, o = 0; i < rgba.length; i += 4, o += 3) { rgb[o] = rgba[i]!; rgb[o + 1] = rgba[i + 1]!; rgb[o + 2] = rgba[i + 2]!; }
  return { data: rgb, channels: 3 };
}
