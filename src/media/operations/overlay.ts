/**
 * Overlays: image overlay (another file of the project, or `self`) and the colour rectangle `rect`.
 * Sizes are percent of the base image (ratio of the overlay kept); positions are keywords or X,Y.
 */
import type { OpDef } from '../pipeline/types.js';
import { type Align, type Rgba, type Size, align, bad, color, expectCount, opacity, size } from '../pipeline/params.js';
import { CENTER, fitInside, intersect, place, resolve, sharpColor } from '../pipeline/place.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface OverlayArgs { uuid: string; size: Size | null; at: Align; opacity: number }
export const overlay: OpDef<OverlayArgs> = {
  kind: 'transform', stackable: true,
  parse(p) {
    expectCount('overlay', p, 1, 4);
    const uuid = p[0]!.toLowerCase();
    if (uuid !== 'self' && !UUID.test(uuid)) throw bad('overlay', `expects a file UUID or "self", got "${p[0]}"`);
    return {
      uuid,
      size: p[1] !== undefined ? size('overlay', p[1]) : null,
      at: p[2] !== undefined ? align('overlay', p[2], { negative: true }) : CENTER,
      opacity: p[3] !== undefined ? opacity('overlay', p[3]) : 1,
    };
  },
  async apply(s, a) {
    const src = await s.loadOverlay(a.uuid);
    // The overlay fits inside its box keeping its ratio; without a size it is kept as is but
    // never larger than the base image.
    const bw = a.size ? resolve(a.size.w, s.width) : Math.min(src.width, s.width);
    const bh = a.size ? resolve(a.size.h, s.height) : Math.min(src.height, s.height);
    const k = Math.min(bw / src.width, bh / src.height);
    const { w, h } = a.size ? { w: Math.max(1, Math.round(src.width * k)), h: Math.max(1, Math.round(src.height * k)) }
      : fitInside(src.width, src.height, bw, bh);
    const { left, top } = place(a.at, s.width, s.height, w, h);
    // Only the part that lands on the image is read out, cut by libvips (extract after resize).
    const hit = intersect(left, top, w, h, s.width, s.height);
    if (!hit) return;
    const cut = { left: hit.left - left, top: hit.top - top, width: hit.width, height: hit.height };
    const sized = src.img.resize({ width: w, height: h, fit: 'fill' });
    const visible = cut.width === w && cut.height === h ? sized : sized.extract(cut);
    // Drawn by the stage: a large overlay (up to the image's size with `self`) goes through scratch
    // files, its opacity applied in a worker, never through a main-thread buffer.
    await s.drawOver(visible, hit, a.opacity);
  },
};

export interface RectArgs { color: Rgba; size: Size; at: Align }
export const rect: OpDef<RectArgs> = {
  kind: 'transform', stackable: true,
  parse(p) {
    expectCount('rect', p, 3, 3);
    return { color: color('rect', p[0]), size: size('rect', p[1]), at: align('rect', p[2]!, { negative: true }) };
  },
  async apply(s, a) {
    const w = Math.max(1, resolve(a.size.w, s.width));
    const h = Math.max(1, resolve(a.size.h, s.height));
    const { left, top } = place(a.at, s.width, s.height, w, h);
    const hit = intersect(left, top, w, h, s.width, s.height);
    if (!hit) return;
    // The fill is made by libvips while compositing, not by a JS loop on the main thread.
    const fill = { create: { width: hit.width, height: hit.height, channels: 4 as const, background: sharpColor(a.color) } };
    const img = await s.pipe();
    s.commit(img.composite([{ input: fill, left: hit.left, top: hit.top }]), s.width, s.height);
  },
};
