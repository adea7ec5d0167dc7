/**
 * Definition family: blur (gaussian; with an amount it is an unsharp mask), sharp, blur_region.
 */
import type { OpDef } from '../pipeline/types.js';
import { type Size, align, bad, expectCount, int, size, type Align } from '../pipeline/params.js';
import { intersect, place, resolve } from '../pipeline/place.js';
import type { Box } from '../pipeline/region-blur.js';

/** URL strength (0..5000) to gaussian sigma; the default 10 is a light sigma-1 blur. */
const sigmaOf = (strength: number): number => Math.max(0.3, strength / 10);

export interface BlurArgs { strength: number; amount: number | null }
export const blur: OpDef<BlurArgs> = {
  kind: 'transform',
  parse(p) {
    expectCount('blur', p, 0, 2);
    const strength = p.length ? int('blur', 'strength', p[0], 0, 5000) : 10;
    return { strength, amount: p.length === 2 ? int('blur', 'amount', p[1], -200, 100) : null };
  },
  async apply(s, a) {
    if (a.strength === 0) return;
    await s.mapPixels({ kind: 'blur', sigma: sigmaOf(a.strength), amount: a.amount === null ? null : a.amount / 100 });
  },
};

export const sharp: OpDef<number> = {
  kind: 'transform',
  parse(p) {
    expectCount('sharp', p, 0, 1);
    return p.length ? int('sharp', 'strength', p[0], 0, 20) : 5;
  },
  async apply(s, v) {
    if (v === 0) return;
    const img = await s.pipe();
    s.commit(img.sharpen({ sigma: 0.5 + v / 10, m2: 1 + v / 4 }), s.width, s.height);
  },
};

export type BlurRegionArgs = { size: Size; at: Align; strength: number } | { faces: true; strength: number };
export const blur_region: OpDef<BlurRegionArgs> = {
  kind: 'transform', stackable: true,
  parse(p) {
    expectCount('blur_region', p, 1, 3);
    if (p[0] === 'faces') {
      expectCount('blur_region', p, 1, 2);
      return { faces: true, strength: p.length === 2 ? int('blur_region', 'strength', p[1], 0, 5000) : 10 };
    }
    if (p.length < 2) throw bad('blur_region', 'expects WxH/X,Y[/strength] or faces[/strength]');
    const at = align('blur_region', p[1]!);
    if ('keyword' in at) throw bad('blur_region', `coordinates must be X,Y, got "${p[1]}"`);
    return { size: size('blur_region', p[0]), at, strength: p.length === 3 ? int('blur_region', 'strength', p[2], 0, 5000) : 10 };
  },
  async apply(s, a) {
    if (a.strength === 0) return;
    let boxes: Box[];
    if ('faces' in a) {
      // Every face the detector finds, each blurred in its own box.
      boxes = (await s.detect('faces')).map((f) => ({ left: f.x, top: f.y, width: f.width, height: f.height }));
    } else {
      const w = resolve(a.size.w, s.width);
      const h = resolve(a.size.h, s.height);
      const { left, top } = place(a.at, s.width, s.height, w, h);
      const box = intersect(left, top, w, h, s.width, s.height);
      boxes = box ? [box] : [];
    }
    if (boxes.length === 0) return;
    // The boxes are blurred wherever the stage maps pixels: in a worker on scratch files when the
    // image is large (region-blur.ts), so its pixels are never in a main-thread buffer.
    await s.mapPixels({ kind: 'blur-boxes', sigma: sigmaOf(a.strength), boxes });
  },
};
