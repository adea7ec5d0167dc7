/**
 * `-/json/`: image info in the public service's shape (wire-reference §3.1). `id` is added by the
 * HTTP layer, which knows the uuid.
 */
import exifr from 'exifr';
import { DATE_TAG } from './exif-options.js';
import type { Metadata } from 'sharp';
import { type SourceFile, NOT_IMAGE, inputOf, kindOf, openSource, readHead, svgFacts } from './source.js';
import { type OtherKind, isOtherKind } from './decoders.js';
import { headerInfo } from './image-info.js';
import { heicSizeInWorker } from './decode-pool.js';
import { DECODE_TIMEOUT_MS, checkInputHeader } from '../limits.js';

function colorMode(channels: number, space: string | undefined, hasAlpha: boolean, paletted: boolean): string {
  if (space === 'cmyk') return 'CMYK';
  if (paletted && !hasAlpha) return 'P';
  if (channels <= 2 || space === 'b-w' || space === 'grey16') return hasAlpha ? 'LA' : 'L';
  return hasAlpha ? 'RGBA' : 'RGB';
}

export async function imageJson(source: SourceFile, timeoutMs = DECODE_TIMEOUT_MS): Promise<Record<string, unknown>> {
  const kind = await kindOf(source);
  if (isOtherKind(kind)) return headerJson(source, kind, timeoutMs);
  // Sizes as stored (before EXIF rotation), as the public service reports them with `orientation`.
  // An SVG's facts come from librsvg in a child process (svg-raster.ts), bounded by the deadline.
  const opened = kind === 'svg' ? svgOpened(await svgFacts(source, timeoutMs)) : await openSource(source, { autorotate: false, ignoreIcc: true, timeoutMs }, kind);
  const meta = opened.meta;
  let geo: { latitude: number; longitude: number } | null = null;
  let taken: string | null = null;
  if (meta?.exif) {
    const gps = (await exifr.gps(inputOf(source)).catch(() => undefined)) as { latitude?: number; longitude?: number } | undefined;
    if (gps && Number.isFinite(gps.latitude) && Number.isFinite(gps.longitude)) geo = { latitude: gps.latitude!, longitude: gps.longitude! };
    const ex = (await exifr.parse(inputOf(source), DATE_TAG).catch(() => null)) as { DateTimeOriginal?: string } | null;
    const m = ex?.DateTimeOriginal ? /^(\d{4}):(\d{2}):(\d{2}) (\d{2}:\d{2}:\d{2})/.exec(ex.DateTimeOriginal) : null;
    if (m) taken = `${m[1]}-${m[2]}-${m[3]}T${m[4]}`;
  }
  const format = kind === 'sharp' || kind === 'svg' ? (meta?.format === 'heif' ? 'AVIF' : String(meta?.format ?? kind)) : kind;
  return {
    dpi: meta?.density ? [Math.round(meta.density), Math.round(meta.density)] : null,
    width: meta?.width ?? opened.width,
    format: format.toUpperCase(),
    height: meta ? (meta.pageHeight ?? meta.height) : opened.height,
    sequence: (meta?.pages ?? 1) > 1,
    color_mode: colorMode(meta?.channels ?? 3, meta?.space, opened.hasAlpha, meta?.isPalette === true),
    orientation: meta?.orientation ?? null,
    geo_location: geo,
    datetime_original: taken,
  };
}

function svgOpened(meta: Metadata): { meta: Metadata; width: number; height: number; hasAlpha: boolean } {
  checkInputHeader(meta);
  return { meta, width: meta.width, height: meta.height, hasAlpha: meta.hasAlpha };
}

/**
 * BMP, TGA, PCX and HEIC from their headers alone, as content_info.image describes them: no pixel
 * is decoded (a HEIC container is parsed in a worker thread). None of them carries EXIF here.
 */
async function headerJson(source: SourceFile, kind: OtherKind, timeoutMs: number): Promise<Record<string, unknown>> {
  let facts: { format: string; width: number; height: number; color_mode: string } | null;
  if (kind === 'heic') {
    const size = await heicSizeInWorker({ path: source.path, bytes: source.bytes ?? null }, timeoutMs);
    facts = size && { format: 'HEIC', ...size, color_mode: 'RGB' };
  } else {
    const head = source.bytes ? source.bytes.subarray(0, 4096) : await readHead(source.path!);
    try {
      facts = headerInfo(kind, head);
    } catch {
      facts = null;
    }
  }
  if (!facts) throw NOT_IMAGE();
  // The same 75 Mpx refusal a render gives, so json does not describe what cannot be processed.
  checkInputHeader(facts);
  return {
    dpi: null, width: facts.width, format: facts.format, height: facts.height, sequence: false,
    color_mode: facts.color_mode, orientation: null, geo_location: null, datetime_original: null,
  };
}
