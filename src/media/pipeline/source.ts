/**
 * Opening a source as a sharp pipeline for any supported input format, with the input limits
 * checked from the header first. Used for the main image and for overlays.
 */
import { open, stat } from 'node:fs/promises';
import type { Metadata, SharpOptions } from 'sharp';
import sharp from '../lazy-sharp.js';
import { type InputKind, detectKind, isOtherKind } from './decoders.js';
import { decodeInWorker, prepareSvgInWorker } from './decode-pool.js';
import { type SvgTransform, prepareSvg } from './svg.js';
import { type SvgHeader, runSvgChild } from './svg-raster.js';
import { DECODE_TIMEOUT_MS, INLINE_SVG_BYTES, MAX_INPUT_PIXELS, MAX_SVG_BYTES, MAX_SVG_RASTER_ELEMENTS, checkInputHeader } from '../limits.js';
import type { LoadedImage } from './types.js';
import { imageErrors } from '../../core/error-catalogue/media.js';

/**
 * A source image: a local file (`path`), its contents in memory (`bytes`, from the CDN's originals
 * cache), or both; decoding prefers the bytes. Only gif2video needs a path (ffmpeg reads a file).
 * `memo` holds header facts derived from those immutable bytes and is shared by every request for
 * the same original, so they are worked out once.
 */
export interface SourceFile { path: string | null; mime: string; bytes?: Buffer; memo?: SourceMemo }
export interface SourceMemo { kind?: InputKind; meta?: Metadata }

/** What sharp, exifr and the decoders read: the bytes when in memory, else the file. */
export function inputOf(src: SourceFile): Buffer | string {
  const input = src.bytes ?? src.path;
  if (input === null) throw new Error('a source needs a path or its bytes');
  return input;
}

export interface Opened extends LoadedImage { kind: InputKind; format: string; meta: Metadata | null }

export const NOT_IMAGE = imageErrors.notAnImage;

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
  if (src.memo?.kind) return src.memo.kind;
  const input = inputOf(src);
  const kind = detectKind(src.mime, typeof input === 'string' ? await readHead(input) : input.subarray(0, 4096));
  if (!kind) throw NOT_IMAGE();
  if (src.memo) src.memo.kind = kind;
  return kind;
}

async function readCapped(src: SourceFile, max: number): Promise<Buffer> {
  const input = inputOf(src);
  if (typeof input !== 'string') {
    if (input.length > max) throw imageErrors.inputTooLarge(max);
    return input;
  }
  const fh = await open(input, 'r');
  try {
    if ((await fh.stat()).size > max) throw imageErrors.inputTooLarge(max);
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}

/**
 * The SVG sanitised and, with `transform`, its geometry applied (svg.ts `prepareSvg`), as UTF-8
 * bytes: in a worker thread when it is large, so parsing it never holds the main thread.
 */
export async function readSvg(src: SourceFile, timeoutMs = DECODE_TIMEOUT_MS, transform: SvgTransform | null = null): Promise<{ body: Buffer; elements: number; width: number; height: number }> {
  const size = src.bytes ? src.bytes.length : (await stat(inputOf(src) as string)).size;
  if (size > MAX_SVG_BYTES) throw imageErrors.inputTooLarge(MAX_SVG_BYTES);
  if (size > INLINE_SVG_BYTES) return prepareSvgInWorker({ path: src.path, bytes: src.bytes ?? null }, transform, timeoutMs);
  const p = prepareSvg((await readCapped(src, MAX_SVG_BYTES)).toString('utf8'), transform);
  return { body: Buffer.from(p.svg), elements: p.elements, width: p.width, height: p.height };
}

/** A sanitised SVG small enough to rasterize (librsvg's cost grows with its elements). */
async function rasterizableSvg(src: SourceFile, timeoutMs: number): Promise<Buffer> {
  const { body, elements } = await readSvg(src, timeoutMs);
  if (elements > MAX_SVG_RASTER_ELEMENTS) {
    throw imageErrors.tooLarge(
      `This SVG has ${elements} elements, above the ${MAX_SVG_RASTER_ELEMENTS} that can be rasterized; it can only be delivered as SVG.`);
  }
  return body;
}

/** What librsvg reports about an SVG, in sharp's metadata shape (for `-/json/` and the encoder). */
function svgMeta(h: SvgHeader): Metadata {
  return { format: 'svg', width: h.width, height: h.height, channels: h.channels, hasAlpha: h.hasAlpha, space: h.space ?? 'srgb', ...(h.density !== null && { density: h.density }) } as Metadata;
}

/** An SVG's size and colour facts, read by librsvg in a child process killed at `timeoutMs`. */
export async function svgFacts(src: SourceFile, timeoutMs = DECODE_TIMEOUT_MS): Promise<Metadata> {
  const { header } = await runSvgChild(await rasterizableSvg(src, timeoutMs), 'header', timeoutMs);
  return svgMeta(header);
}

/** An SVG rasterized at its own size in a child process (svg-raster.ts), then an ordinary PNG pipeline. */
async function openSvg(src: SourceFile, timeoutMs: number, base: SharpOptions): Promise<Opened> {
  const started = Date.now();
  const { header, png } = await runSvgChild(await rasterizableSvg(src, timeoutMs), 'raster', timeoutMs - (Date.now() - started), (h) =>
    checkInputHeader(h));
  const img = sharp(png!, base);
  return { img, width: header.width, height: header.height, hasAlpha: header.hasAlpha, kind: 'svg', format: 'svg', meta: svgMeta(header) };
}

export interface OpenOptions {
  autorotate: boolean;
  ignoreIcc: boolean;
  /** Time limit of a decode in a worker thread (the render's remaining time); DECODE_TIMEOUT_MS by default. */
  timeoutMs?: number;
}

/** Header check, then a lazy first-frame pipeline (animated images are processed as static). */
export async function openSource(src: SourceFile, opts: OpenOptions, kind?: InputKind): Promise<Opened> {
  kind ??= await kindOf(src);
  const base = { limitInputPixels: MAX_INPUT_PIXELS, pages: 1, failOn: 'error' as const };
  if (isOtherKind(kind)) {
    const px = await decodeInWorker(kind, { path: src.path, bytes: src.bytes ?? null }, opts.timeoutMs ?? DECODE_TIMEOUT_MS);
    const img = sharp(px.data, { ...base, raw: { width: px.width, height: px.height, channels: px.channels } });
    return { img, width: px.width, height: px.height, hasAlpha: px.channels === 4, kind, format: kind, meta: null };
  }
  // SVG is rasterized from sanitised text held in memory, never from its path (no base directory).
  if (kind === 'svg') return openSvg(src, opts.timeoutMs ?? DECODE_TIMEOUT_MS, base);
  const input = inputOf(src);
  const meta = src.memo?.meta ?? (await headerOf(input));
  if (src.memo) src.memo.meta = meta;
  checkInputHeader({ width: meta.width, height: meta.pageHeight ?? meta.height });
  const img = sharp(input, { ...base, autoOrient: opts.autorotate, ignoreIcc: opts.ignoreIcc });
  const swap = opts.autorotate && (meta.orientation ?? 1) >= 5;
  const w = meta.width;
  const h = meta.pageHeight ?? meta.height;
  return { img, width: swap ? h : w, height: swap ? w : h, hasAlpha: meta.hasAlpha, kind, format: meta.format, meta };
}

async function headerOf(input: string | Buffer): Promise<Metadata> {
  try {
    return await sharp(input, { limitInputPixels: false, pages: 1 }).metadata();
  } catch {
    throw NOT_IMAGE();
  }
}
