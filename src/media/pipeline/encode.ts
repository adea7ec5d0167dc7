/**
 * Final phase: choose the output format (explicit, auto by Accept, preserve, or the default),
 * colour profile and metadata handling, and the encoder settings per quality level.
 */
import exifr from 'exifr';
import { CARRIED_EXIF, CARRIED_EXIF_NO_GPS } from './exif-options.js';
import type { Exif } from 'sharp';
import type { Plan } from '../plan.js';
import type { PipelineStage } from './state.js';
import { type Opened, type SourceFile, inputOf } from './source.js';
import type { OutputFormat, Quality } from './types.js';
import { sharpColor } from './place.js';

export interface Encoded { body: Buffer; contentType: string; width: number; height: number; varyAccept: boolean; format: string }

/** Whether the Accept header admits `type` (q=0 means refused). */
export function accepts(accept: string | undefined, type: string): boolean {
  if (!accept) return false;
  return accept.split(',').some((part) => {
    const [t, ...params] = part.trim().toLowerCase().split(';');
    if (t?.trim() !== type) return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return !q || Number(q.slice(2)) > 0;
  });
}

/**
 * For `format/auto`: the Accept-dependent part of the cache key ('avif', 'webp' or 'fallback');
 * null when the plan's output does not depend on Accept.
 */
export function negotiateFormat(plan: Plan, accept: string | undefined): 'avif' | 'webp' | 'fallback' | null {
  if (plan.steps.find((s) => s.name === 'format')?.args !== 'auto') return null;
  return accepts(accept, 'image/avif') ? 'avif' : accepts(accept, 'image/webp') ? 'webp' : 'fallback';
}

function chooseFormat(s: PipelineStage, opened: Opened, accept: string | undefined): { fmt: OutputFormat; vary: boolean } {
  const f = s.out.format;
  if (f === 'jpeg' || f === 'png' || f === 'webp' || f === 'avif') return { fmt: f, vary: false };
  if (f === 'auto') {
    const fmt = accepts(accept, 'image/avif') ? 'avif' : accepts(accept, 'image/webp') ? 'webp' : s.hasAlpha ? 'png' : 'jpeg';
    return { fmt, vary: true };
  }
  // preserve and the default: keep JPEG/PNG, otherwise PNG when transparency matters, else JPEG.
  if (s.hasAlpha) return { fmt: 'png', vary: false };
  return { fmt: opened.format === 'png' ? 'png' : 'jpeg', vary: false };
}

/** Encoder quality per named level. `smart` has no content analysis here: it is `normal`. */
export const QUALITY_VALUES: Record<Quality, number> = {
  lightest: 40, lighter: 60, smart_retina: 65, smart: 80, normal: 80, better: 87, best: 95,
};

const MIME: Record<OutputFormat, string> = { jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp', avif: 'image/avif' };

export async function encode(s: PipelineStage, opened: Opened, source: SourceFile, accept: string | undefined): Promise<Encoded> {
  const { fmt, vary } = chooseFormat(s, opened, accept);
  const q = QUALITY_VALUES[s.out.quality ?? 'normal'];
  let img = s.current();
  if (fmt === 'jpeg' && s.hasAlpha) {
    // Flatten on its own pipeline so it happens after every queued operation.
    const bg = s.fill ?? { r: 255, g: 255, b: 255, alpha: 1 };
    img = (await s.pipe()).flatten({ background: sharpColor({ ...bg, alpha: 1 }) });
  }
  const unflushed = s.flushes === 0;
  const icc = opened.meta?.icc;
  const maxIcc = (s.out.maxIccKb ?? 10) * 1024;
  // A profile survives only on an unmaterialised pipeline (raw buffers carry none): elsewhere the
  // pixels are already converted to sRGB, which is what `icc` would have produced.
  if (s.out.srgb === 'keep_profile' && unflushed && icc && icc.length <= maxIcc && maxIcc > 0) img = img.keepIccProfile();
  if (s.out.stripMeta === 'none' && unflushed) img = img.keepExif();
  else if (s.out.stripMeta !== 'all' && opened.meta?.exif) img = img.withExif(await exifFor(inputOf(source), s.out.stripMeta === 'none'));
  switch (fmt) {
    case 'jpeg': img = img.jpeg({ quality: q, progressive: s.out.progressive, chromaSubsampling: q >= 90 ? '4:4:4' : '4:2:0' }); break;
    case 'png': img = img.png({ compressionLevel: 6, ...(q < 70 && { palette: true, quality: q }) }); break;
    case 'webp': img = img.webp({ quality: q, effort: 4 }); break;
    case 'avif': img = img.avif({ quality: Math.max(1, q - 20), effort: 2 }); break;
  }
  const { data, info } = await s.timed(img).toBuffer({ resolveWithObject: true });
  return { body: data, contentType: MIME[fmt], width: info.width, height: info.height, varyAccept: vary, format: fmt };
}

/** EXIF rebuilt as sharp string tags; `withGps` false drops the GPS directory (strip_meta/sensitive). */
async function exifFor(input: string | Buffer, withGps: boolean): Promise<Exif> {
  const raw = (await exifr.parse(input, withGps ? CARRIED_EXIF : CARRIED_EXIF_NO_GPS).catch(() => null)) as Record<string, Record<string, unknown>> | null;
  const dir = (o: Record<string, unknown> | undefined): Record<string, string> => {
    const d: Record<string, string> = {};
    for (const [k, v] of Object.entries(o ?? {})) {
      if (typeof v === 'string' || typeof v === 'number') d[k] = String(v);
      else if (Array.isArray(v) && v.every((x) => typeof x === 'number')) d[k] = v.join(' ');
    }
    delete d.Orientation; // pixels are already upright
    return d;
  };
  const exif: Exif = { IFD0: dir(raw?.ifd0), IFD2: dir(raw?.exif) };
  if (withGps && raw?.gps) exif.IFD3 = dir(raw.gps);
  return exif;
}
