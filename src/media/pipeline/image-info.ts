/**
 * content_info.image for a file: dimensions and colour from the decoder's header read, EXIF facts
 * from exifr. Formats sharp's libvips does not read (BMP, TGA, PCX, and HEIC when libheif lacks
 * HEVC) are described from their own headers via decoders.ts, so they count as images too.
 */
import { open } from 'node:fs/promises';
import type { Metadata } from 'sharp';
import sharp from '../lazy-sharp.js';
import exifr from 'exifr';
import { DATE_AND_GPS_TAGS } from './exif-options.js';
import type { ImageInfo } from '../../core/file-record.js';
import { detectKind, headerSize } from './decoders.js';
import { heicSizeInWorker } from './decode-pool.js';
import { readHead, svgFacts } from './source.js';
import { svgBox } from './svg.js';
import { DECODE_TIMEOUT_MS, MAX_DECODER_INPUT_BYTES } from '../limits.js';

/** Reads image facts without decoding pixels; null when no decoder understands the bytes. */
export async function readImageInfo(path: string, mimeType: string): Promise<ImageInfo | null> {
  let meta: Metadata;
  try {
    // Header only: limitInputPixels off so giant images are still described (they become is_image false).
    meta = mimeType === SVG ? await svgMetadata(path) : await sharp(path, { limitInputPixels: false, animated: true }).metadata();
  } catch {
    return readOtherInfo(path, mimeType);
  }
  if (!meta.width || !meta.height) return null;
  const exif = mimeType === SVG ? NO_EXIF : await readExif(path);
  const pages = meta.pages ?? 1;
  return {
    format: formatName(meta.format, mimeType),
    width: meta.width,
    // Animated images report the height of all frames stacked; one frame is what users mean.
    height: meta.pageHeight && pages > 1 ? meta.pageHeight : meta.height,
    sequence: pages > 1,
    color_mode: colorMode(meta),
    orientation: meta.orientation ?? null,
    geo_location: exif.geo,
    datetime_original: exif.datetimeOriginal,
    dpi: meta.density ? [meta.density, meta.density] : null,
  };
}

const SVG = 'image/svg+xml';
const NO_EXIF = { geo: null, datetimeOriginal: null };
/** Where an SVG's root element is looked for when librsvg cannot read the file in time. */
const SVG_HEAD_BYTES = 64 * 1024;

/**
 * An SVG's size as the CDN reads it (librsvg in a child process killed at the decode deadline):
 * in-process, librsvg's parse of a hostile SVG held a libuv thread for seconds with no deadline.
 * An SVG too complex or too slow to parse is described by its root element's declared size, the
 * way it is delivered (as SVG, unrasterized).
 */
async function svgMetadata(path: string): Promise<Metadata> {
  try {
    return await svgFacts({ path, mime: SVG }, DECODE_TIMEOUT_MS);
  } catch {
    const { width, height } = svgBox((await readHead(path, SVG_HEAD_BYTES)).toString('utf8'));
    return { format: 'svg', width, height, channels: 4, hasAlpha: true, space: 'srgb' } as Metadata;
  }
}

/** BMP, TGA, PCX, HEIC: size from the header; no EXIF, colour as the decoders deliver it. */
async function readOtherInfo(path: string, mimeType: string): Promise<ImageInfo | null> {
  const fh = await open(path, 'r');
  let head: Buffer;
  let size: { width: number; height: number } | null = null;
  try {
    const buf = Buffer.alloc(4096);
    head = buf.subarray(0, (await fh.read(buf, 0, buf.length, 0)).bytesRead);
    const kind = detectKind(mimeType, head);
    if (kind === 'bmp' || kind === 'tga' || kind === 'pcx') return headerInfo(kind, head);
    if (kind === 'heic') {
      if ((await fh.stat()).size > MAX_DECODER_INPUT_BYTES) return null;
      // libheif (wasm) parses the container in a worker thread: loading it alone would stall the loop.
      size = await heicSizeInWorker({ path, bytes: null }, DECODE_TIMEOUT_MS).catch(() => null);
      return size ? other('HEIC', size, 'RGB') : null;
    }
    return null;
  } catch {
    return null;
  } finally {
    await fh.close();
  }
}

/** BMP, TGA, PCX facts from the first bytes of the file (no decoding); null when the header is unusable. */
export function headerInfo(kind: 'bmp' | 'tga' | 'pcx', head: Buffer): ImageInfo | null {
  const size = head.length >= 30 ? headerSize(kind, head) : null;
  if (!size || size.width < 1 || size.height < 1) return null;
  const bits = kind === 'bmp' ? head.readUInt16LE(28) : kind === 'tga' ? (head[16] ?? 0) : (head[3] ?? 0) * (head[65] ?? 0);
  return other(kind.toUpperCase(), size, bits === 32 ? 'RGBA' : bits <= 8 && kind !== 'tga' ? 'P' : 'RGB');
}

export function other(format: string, size: { width: number; height: number }, colorMode: string): ImageInfo {
  return { format, ...size, sequence: false, color_mode: colorMode, orientation: null, geo_location: null, datetime_original: null, dpi: null };
}

function formatName(format: string | undefined, mimeType: string): string {
  if (format === 'heif') return mimeType === 'image/avif' ? 'AVIF' : 'HEIC';
  if (format === 'jpeg' || format === 'jpg') return 'JPEG';
  return (format ?? mimeType.split('/')[1] ?? 'unknown').toUpperCase();
}

function colorMode(meta: Metadata): string {
  if (meta.space === 'cmyk') return 'CMYK';
  if (meta.isPalette) return meta.hasAlpha ? 'PA' : 'P';
  if (meta.channels === 1 || meta.space === 'b-w') return meta.hasAlpha ? 'LA' : 'L';
  if (meta.channels === 2) return 'LA';
  return meta.hasAlpha ? 'RGBA' : 'RGB';
}

async function readExif(path: string): Promise<{ geo: ImageInfo['geo_location']; datetimeOriginal: string | null }> {
  try {
    const tags = (await exifr.parse(path, DATE_AND_GPS_TAGS)) as
      | Record<string, unknown>
      | undefined;
    if (!tags) return { geo: null, datetimeOriginal: null };
    const gps = await exifr.gps(path).catch(() => undefined);
    const geo = gps && Number.isFinite(gps.latitude) && Number.isFinite(gps.longitude) ? { latitude: gps.latitude, longitude: gps.longitude } : null;
    return { geo, datetimeOriginal: exifDate(tags['DateTimeOriginal']) };
  } catch {
    return { geo: null, datetimeOriginal: null };
  }
}

/** `2023:03:10 16:23:15` -> `2023-03-10T16:23:15` (no zone, as the public service answers). */
function exifDate(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const m = /^(\d{4}):(\d{2}):(\d{2})[ T](\d{2}):(\d{2}):(\d{2})/.exec(v.trim());
  return m ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}` : null;
}
