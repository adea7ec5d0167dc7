/**
 * Rotation family: rotate (counterclockwise degrees), flip (vertical), mirror (horizontal).
 * `autorotate` is an input setting (see output.ts): EXIF orientation is applied at decode.
 */
import type { OpDef } from '../pipeline/types.js';
import { expectCount, int, none } from '../pipeline/params.js';
import { sharpColor } from '../pipeline/place.js';

export const rotate: OpDef<number> = {
  kind: 'transform',
  parse(p) {
    expectCount('rotate', p, 1, 1);
    return int('rotate', 'angle', p[0], -360, 360);
  },
  async apply(s, deg) {
    const norm = ((deg % 360) + 360) % 360;
    if (norm === 0) return;
    const img = await s.pipe();
    // The URL angle is counterclockwise; sharp's is clockwise.
    const rotated = img.rotate(-deg, { background: sharpColor(s.background()) });
    if (norm % 90 === 0) {
      const swap = norm === 90 || norm === 270;
      s.commit(rotated, swap ? s.height : s.width, swap ? s.width : s.height);
      return;
    }
    // A free angle grows the canvas by an amount libvips rounds itself: read it back.
    s.commit(rotated, s.width, s.height, s.hasAlpha || s.background().alpha < 1);
    await s.settle();
  },
};

export const flip: OpDef<null> = {
  kind: 'transform',
  parse: (p) => none('flip', p),
  async apply(s) {
    s.commit((await s.pipe()).flip(), s.width, s.height);
  },
};

export const mirror: OpDef<null> = {
  kind: 'transform',
  parse: (p) => none('mirror', p),
  async apply(s) {
    s.commit((await s.pipe()).flop(), s.width, s.height);
  },
};

