/** content_info.image for a file: dimensions and colour from the decoder's header read, EXIF facts from exifr. */
import sharp, { type Metadata } from 'sharp';
import exifr from 'exifr';
import type { ImageInfo } from '../core/file-record.js';

/** Reads image facts without decoding pixels; null when no decoder understands the bytes. */
export async function readImageInfo(path: string, mimeType: string): Promise<ImageInfo | null> {
  let meta: Metadata;
  try {
    // Header only: limitInputPixels off so giant images are still described (they become is_image false).
    meta = await sharp(path, { limitInputPixels: false, animated: true }).metadata();
  } catch {
    return null;
  }
  if (!meta.width || !meta.height) return null;
  const exif = await readExif(path);
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
    const tags = (await exifr.parse(path, { pick: ['DateTimeOriginal', 'GPSLatitude', 'GPSLongitude', 'GPSLatitudeRef', 'GPSLongitudeRef'], reviveValues: false })) as
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
