/**
 * border_radius: rounded (or elliptical) corners made transparent with an SVG mask.
 * CSS order for 1–4 values: all | tl+br, tr+bl | tl, tr+bl, br | tl, tr, br, bl.
 */
import type { OpDef } from '../pipeline/types.js';
import { type Length, bad, expectCount, length } from '../pipeline/params.js';
import { resolve } from '../pipeline/place.js';

export interface RadiusArgs { h: Length[]; v: Length[] | null }

function list(raw: string | undefined, what: string): Length[] {
  const parts = (raw ?? '').split(',');
  if (parts.length < 1 || parts.length > 4 || parts.some((x) => x === '')) {
    throw bad('border_radius', `${what} must be 1 to 4 comma-separated values, got "${raw ?? ''}"`);
  }
  return parts.map((x) => length('border_radius', what, x));
}

function corners<T>(v: T[]): [T, T, T, T] {
  const [a, b = a, c = a, d = b] = v as [T, T?, T?, T?];
  return [a, b!, c!, d!];
}

/** The SVG path of a rounded rectangle with per-corner radii (tl, tr, br, bl). */
export function roundedRectPath(W: number, H: number, rx: number[], ry: number[]): string {
  const [a, b, c, d] = [0, 1, 2, 3].map((i) => [rx[i]!, ry[i]!] as const) as [readonly [number, number], readonly [number, number], readonly [number, number], readonly [number, number]];
  return [
    `M${a[0]},0`, `H${W - b[0]}`, `A${b[0]},${b[1]} 0 0 1 ${W},${b[1]}`,
    `V${H - c[1]}`, `A${c[0]},${c[1]} 0 0 1 ${W - c[0]},${H}`,
    `H${d[0]}`, `A${d[0]},${d[1]} 0 0 1 0,${H - d[1]}`,
    `V${a[1]}`, `A${a[0]},${a[1]} 0 0 1 ${a[0]},0`, 'Z',
  ].join(' ');
}

export const border_radius: OpDef<RadiusArgs> = {
  kind: 'transform',
  parse(p) {
    expectCount('border_radius', p, 1, 2);
    return { h: list(p[0], 'radii'), v: p.length === 2 ? list(p[1], 'vertical radii') : null };
  },
  async apply(s, a) {
    const W = s.width;
    const H = s.height;
    const hs = corners(a.h);
    const vs = corners(a.v ?? a.h);
    // A percent radius is a share of the side it runs along: 50p on both axes makes an ellipse.
    const rx = hs.map((l) => Math.min(W / 2, resolve(l, W)));
    const ry = vs.map((l) => Math.min(H / 2, resolve(l, H)));
    if (rx.every((r) => r === 0) || ry.every((r) => r === 0)) return;
    const mask = Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}"><path d="${roundedRectPath(W, H, rx, ry)}" fill="#fff"/></svg>`,
    );
    if (!s.hasAlpha) s.commit((await s.pipe()).ensureAlpha(), W, H, true);
    // On its own pipeline: composite must see the alpha channel added above.
    s.commit((await s.pipe()).composite([{ input: mask, blend: 'dest-in' }]), W, H, true);
  },
};
