/**
 * `-/json/`: image info in the public service's shape (wire-reference §3.1). `id` is added by the
 * HTTP layer, which knows the uuid.
 */
import exifr from 'exifr';
import { type SourceFile, inputOf, kindOf, openSource } from './source.js';

function colorMode(channels: number, space: string | undefined, hasAlpha: boolean, paletted: boolean): string {
  if (space === 'cmyk') return 'CMYK';
  if (paletted && !hasAlpha) return 'P';
  if (channels <= 2 || space === 'b-w' || space === 'grey16') return hasAlpha ? 'LA' : 'L';
  return hasAlpha ? 'RGBA' : 'RGB';
}

export async function imageJson(source: SourceFile): Promise<Record<string, unknown>> {
  const kind = await kindOf(source);
  // Sizes as stored (before EXIF rotation), as the public service reports them with `orientation`.
  const opened = await openSource(source, { autorotate: false, ignoreIcc: true }, kind);
  const meta = opened.meta;
  let geo: { latitude: number; longitude: number } | null = null;
  let taken: string | null = null;
  if (meta?.exif) {
    const gps = (await exifr.gps(inputOf(source)).catch(() => undefined)) as { latitude?: number; longitude?: number } | undefined;
    if (gps && Number.isFinite(gps.latitude) && Number.isFinite(gps.longitude)) geo = { latitude: gps.latitude!, longitude: gps.longitude! };
    const ex = (await exifr.parse(inputOf(source), { pick: ['DateTimeOriginal'], reviveValues: false } as never).catch(() => null)) as { DateTimeOriginal?: string } | null;
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
