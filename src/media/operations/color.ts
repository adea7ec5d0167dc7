/**
 * Colour adjustments: brightness, exposure, gamma, contrast, saturation, vibrance, warmth,
 * enhance, grayscale, invert. Value ranges follow wire-reference §3.4; 0 (gamma: 100) is identity.
 */
import type { OpDef } from '../pipeline/types.js';
import { expectCount, int, none } from '../pipeline/params.js';
import { IDENTITY, lutTable, saturationMatrix, type Mat3 } from '../pipeline/pixels.js';
import type { PixelStep } from '../pipeline/pixel-step.js';

/** A transform with one integer value in [min, max]; `identity` short-circuits. */
function valueOp(name: string, min: number, max: number, identity: number, kernel: (v: number) => PixelStep): OpDef<number> {
  return {
    kind: 'transform',
    parse(p) {
      expectCount(name, p, 1, 1);
      return int(name, 'value', p[0], min, max);
    },
    async apply(s, v) {
      if (v !== identity) await s.mapPixels(kernel(v));
    },
  };
}

const scale = (k: number): Mat3 => [k, 0, 0, 0, k, 0, 0, 0, k];
const affine = (m: Mat3, off: [number, number, number]): PixelStep => ({ kind: 'affine', m, off });

// Additive: +100 lifts every channel by half the range.
export const brightness = valueOp('brightness', -100, 100, 0, (v) => affine(IDENTITY, [v * 1.275, v * 1.275, v * 1.275]));
// Photographic stops: +100 is one stop (x2), +500 five stops.
export const exposure = valueOp('exposure', -500, 500, 0, (v) => affine(scale(2 ** (v / 100)), [0, 0, 0]));
// 100 = none; 200 brightens midtones (exponent 1/2), 50 darkens them.
export const gamma = valueOp('gamma', 0, 1000, 100, (v) => ({ kind: 'lut', table: lutTable((x) => 255 * (x / 255) ** (100 / Math.max(v, 1))) }));
// Slope around mid-grey: -100 flattens to grey, +100 doubles.
export const contrast = valueOp('contrast', -100, 500, 0, (v) => {
  const a = 1 + v / 100;
  const o = 127.5 * (1 - a);
  return affine(scale(a), [o, o, o]);
});
export const saturation = valueOp('saturation', -100, 500, 0, (v) => affine(saturationMatrix(1 + v / 100), [0, 0, 0]));
export const vibrance = valueOp('vibrance', -100, 500, 0, (v) => ({ kind: 'vibrance', k: v / 100 }));
// Warm = more red, less blue; cool the reverse.
export const warmth = valueOp('warmth', -100, 100, 0, (v) => affine([1 + v / 250, 0, 0, 0, 1 + v / 1000, 0, 0, 0, 1 - v / 250], [0, 0, 0]));

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
