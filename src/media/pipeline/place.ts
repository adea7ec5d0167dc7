/**
 * Pure geometry: resolving lengths and alignments against the current image size.
 * Percent offsets are a share of the free space (`50p,50p` centres, `100p,100p` is bottom-right),
 * which is what makes keyword and percent alignment agree.
 */
import type { Align, Length, Rgba } from './params.js';

export function resolve(len: Length, ref: number): number {
  return len.unit === 'p' ? Math.round((ref * len.value) / 100) : len.value;
}

/** Top-left corner of a w×h box placed inside W×H by `align`. */
export function place(align: Align, W: number, H: number, w: number, h: number): { left: number; top: number } {
  if ('keyword' in align) {
    const fx = align.keyword === 'left' ? 0 : align.keyword === 'right' ? 1 : 0.5;
    const fy = align.keyword === 'top' ? 0 : align.keyword === 'bottom' ? 1 : 0.5;
    return { left: Math.round((W - w) * fx), top: Math.round((H - h) * fy) };
  }
  const off = (l: Length, free: number): number => (l.unit === 'p' ? Math.round((free * l.value) / 100) : l.value);
  return { left: off(align.x, W - w), top: off(align.y, H - h) };
}

export const TOP_LEFT: Align = { x: { value: 0, unit: 'px' }, y: { value: 0, unit: 'px' } };
export const CENTER: Align = { keyword: 'center' };

/** Largest w×h of ratio rx:ry that fits in W×H. */
export function fitRatio(W: number, H: number, rx: number, ry: number): { w: number; h: number } {
  if (W * ry >= H * rx) return { w: Math.max(1, Math.round((H * rx) / ry)), h: H };
  return { w: W, h: Math.max(1, Math.round((W * ry) / rx)) };
}

/** Fit inside a box keeping the ratio; never enlarges. */
export function fitInside(W: number, H: number, bw: number, bh: number): { w: number; h: number } {
  const k = Math.min(1, bw / W, bh / H);
  return { w: Math.max(1, Math.round(W * k)), h: Math.max(1, Math.round(H * k)) };
}

export function sharpColor(c: Rgba): { r: number; g: number; b: number; alpha: number } {
  return { r: c.r, g: c.g, b: c.b, alpha: c.alpha };
}

/** Intersection of the box (x, y, w, h) with the image 0..W × 0..H, or null when they do not meet. */
export function intersect(x: number, y: number, w: number, h: number, W: number, H: number):
  { left: number; top: number; width: number; height: number } | null {
  const left = Math.max(0, x);
  const top = Math.max(0, y);
  const right = Math.min(W, x + w);
  const bottom = Math.min(H, y + h);
  if (right <= left || bottom <= top) return null;
  return { left, top, width: right - left, height: bottom - top };
}
