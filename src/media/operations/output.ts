/**
 * Compression and output settings: format, quality, progressive, strip_meta, srgb, max_icc_size,
 * plus the plan-level flags inline, json, autorotate and rasterize. None of them touches pixels in
 * URL order; the encoder (pipeline/encode.ts) reads `s.out`.
 */
import type { OpDef, OutputFormat, Quality } from '../pipeline/types.js';
import { bad, expectCount, int, none, oneOf } from '../pipeline/params.js';

type FormatArg = OutputFormat | 'auto' | 'preserve' | 'mp4' | 'webm';
const FORMATS: readonly FormatArg[] = ['jpeg', 'png', 'webp', 'avif', 'auto', 'preserve', 'mp4', 'webm'];

export const format: OpDef<FormatArg> = {
  kind: 'setting',
  videoCompanion: true,
  parse(p) {
    expectCount('format', p, 1, 1);
    // `jpg` is a common spelling of the same thing; canonicalised so it shares the cache entry.
    const v = p[0] === 'jpg' ? 'jpeg' : p[0];
    return oneOf('format', 'format', v, FORMATS);
  },
  apply(s, a) {
    // mp4/webm only make sense with gif2video; plan.ts refuses them otherwise.
    if (a !== 'mp4' && a !== 'webm') s.out.format = a;
  },
};

const QUALITIES: readonly Quality[] = ['smart', 'smart_retina', 'normal', 'better', 'best', 'lighter', 'lightest'];
export const quality: OpDef<Quality> = {
  kind: 'setting',
  videoCompanion: true,
  parse(p) {
    expectCount('quality', p, 1, 1);
    return oneOf('quality', 'quality', p[0], QUALITIES);
  },
  apply(s, a) {
    s.out.quality = a;
  },
};


export const progressive: OpDef<boolean> = {
  kind: 'setting',
  parse: (p) => (expectCount('progressive', p, 1, 1), oneOf('progressive', 'value', p[0], ['yes', 'no'] as const) === 'yes'),
  apply(s, a) {
    s.out.progressive = a;
  },
};

export const strip_meta: OpDef<'all' | 'none' | 'sensitive'> = {
  kind: 'setting',
  parse: (p) => (expectCount('strip_meta', p, 1, 1), oneOf('strip_meta', 'mode', p[0], ['all', 'none', 'sensitive'] as const)),
  apply(s, a) {
    s.out.stripMeta = a;
  },
};

export const srgb: OpDef<'fast' | 'icc' | 'keep_profile'> = {
  kind: 'setting',
  parse: (p) => (expectCount('srgb', p, 1, 1), oneOf('srgb', 'mode', p[0], ['fast', 'icc', 'keep_profile'] as const)),
  apply(s, a) {
    s.out.srgb = a;
  },
};

export const max_icc_size: OpDef<number> = {
  kind: 'setting',
  parse: (p) => (expectCount('max_icc_size', p, 1, 1), int('max_icc_size', 'size in kilobytes', p[0], 0, 100_000)),
  apply(s, a) {
    s.out.maxIccKb = a;
  },
};

export const autorotate: OpDef<boolean> = {
  kind: 'setting',
  parse: (p) => (expectCount('autorotate', p, 1, 1), oneOf('autorotate', 'value', p[0], ['yes', 'no'] as const) === 'yes'),
  apply(s, a) {
    s.out.autorotate = a;
  },
};

export const rasterize: OpDef<null> = {
  kind: 'setting',
  parse: (p) => none('rasterize', p),
  apply(s) {
    s.out.rasterize = true;
  },
};

/** Content-Disposition override; read from the plan by the HTTP layer. */
export const inline: OpDef<boolean> = {
  kind: 'setting',
  parse: (p) => (expectCount('inline', p, 1, 1), oneOf('inline', 'value', p[0], ['yes', 'no'] as const) === 'yes'),
  apply() {},
};

/** Image info as JSON instead of the image; plan.ts checks it is last. */
export const json: OpDef<null> = {
  kind: 'setting',
  parse: (p) => none('json', p),
  apply() {},
};

/** Re-exported for plan.ts to describe the video-only formats. */
export function isVideoFormat(a: unknown): a is 'mp4' | 'webm' {
  return a === 'mp4' || a === 'webm';
}

export function assertImageFormat(a: unknown): void {
  if (isVideoFormat(a)) throw bad('format', `"${a}" is only valid together with gif2video`);
}
