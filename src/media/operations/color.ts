/**
 * Colour adjustments: brightness, exposure, gamma, contrast, saturation, vibrance, warmth,
 * enhance, grayscale, invert. Value ranges follow wire-reference §3.4; 0 (gamma: 100) is identity.
 */
import type { OpDef, RawImage, Stage } from '../pipeline/types.js';
import { expectCount, int, none } from '../pipeline/params.js';
import { IDENTITY, affine, lut, saturationMatrix, vibrance as vibranceMap, type Mat3 } from '../pipeline/pixels.js';

async function onPixels(s: Stage, f: (img: RawImage) => RawImage): Promise<void> {
  s.fromRaw(f(await s.raw()));
}

/** A transform with one integer value in [min, max]; `identity` short-circuits. */
function valueOp(name: string, min: number, max: number, identity: number, fn: (img: RawImage, v: number) => RawImage): OpDef<number> {
  return {
    kind: 'transform',
    parse(p) {
      expectCount(name, p, 1, 1);
      return int(name, 'value', p[0], min, max);
    },
    async apply(s, v) {
      if (v !== identity) await onPixels(s, (img) => fn(img, v));
    },
  };
}

const scale = (k: number): Mat3 => [k, 0, 0, 0, k, 0, 0, 0, k];

// Additive: +100 lifts every channel by half the range.
export const brightness = valueOp('brightness', -100, 100, 0, (img, v) => affine(img, IDENTITY, [v * 1.275, v * 1.275, v * 1.275]));
// Photographic stops: +100 is one stop (x2), +500 five stops.
export const exposure = valueOp('exposure', -500, 500, 0, (img, v) => affine(img, scale(2 ** (v / 100)), [0, 0, 0]));
// 100 = none; 200 brightens midtones (exponent 1/2), 50 darkens them.
export const gamma = valueOp('gamma', 0, 1000, 100, (img, v) => lut(img, (x) => 255 * (x / 255) ** (100 / Math.max(v, 1))));
// Slope around mid-grey: -100 flattens to grey, +100 doubles.
export const contrast = valueOp('contrast', -100, 500, 0, (img, v) => {
  const a = 1 + v / 100;
  const o = 127.5 * (1 - a);
  return affine(img, scale(a), [o, o, o]);
});
export const saturation = valueOp('saturation', -100, 500, 0, (img, v) => affine(img, saturationMatrix(1 + v / 100), [0, 0, 0]));
export const vibrance = valueOp('vibrance', -100, 500, 0, (img, v) => vibranceMap(img, v / 100));
// Warm = more red, less blue; cool the reverse.
export const warmth = valueOp('warmth', -100, 100, 0, (img, v) => affine(img, [1 + v / 250, 0, 0, 0, 1 + v / 1000, 0, 0, 0, 1 - v / 250], [0, 0, 0]));

export const enhance: OpDef<number> = {
  kind: 'transform',
  parse(p) {
    expectCount('enhance', p, 0, 1);
    return p.length === 0 ? 50 : int('enhance', 'strength', p[0], 0, 100);
  },
  async apply(s, v) {
    if (v === 0) return;
    // Auto-levels: stretch luminance between percentiles that widen with strength.
    const cut = v / 50;
    s.commit((await s.pipe()).normalise({ lower: cut, upper: 100 - cut }), s.width, s.height);
  },
};

export const grayscale: OpDef<null> = {
  kind: 'transform',
  parse: (p) => none('grayscale', p),
  async apply(s) {
    s.commit((await s.pipe()).grayscale(), s.width, s.height);
  },
};

export const invert: OpDef<null> = {
  kind: 'transform',
  parse: (p) => none('invert', p),
  async apply(s) {
    s.commit((await s.pipe()).negate({ alpha: false }), s.width, s.height);
  },
};
