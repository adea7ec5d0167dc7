/**
 * Resize and crop family: preview, resize, stretch, smart_resize, scale_crop, crop, trim, setfill,
 * zoom_objects. Target sizes are computed here (not left to sharp) so the stage always knows the
 * exact dimensions it will produce.
 */
import type { OpDef, Stage } from '../pipeline/types.js';
import {
  type Align, type Size, align, bad, color, expectCount, int, isAlign, oneOf, pixelDims, ratio, size, type Rgba,
} from '../pipeline/params.js';
import { type Box, CROP_TAGS, centredStart, smartFocus, smartOrder, tagged, union } from './focus.js';
import { MAX_PARAM_PX, checkIntermediate, checkRequestedSize } from '../limits.js';
import { CENTER, TOP_LEFT, fitInside, fitRatio, intersect, place, resolve, sharpColor } from '../pipeline/place.js';

/** Cuts the box (x, y, w, h); parts outside the image become the background colour. */
export async function cropBox(s: Stage, x: number, y: number, w: number, h: number): Promise<void> {
  const hit = intersect(x, y, w, h, s.width, s.height);
  const bg = s.background();
  if (!hit) {
    s.solid(w, h, bg);
    return;
  }
  const img = await s.pipe();
  if (hit.left !== 0 || hit.top !== 0 || hit.width !== s.width || hit.height !== s.height) {
    s.commit(img.extract(hit), hit.width, hit.height);
  } else {
    s.commit(img, s.width, s.height);
  }
  if (hit.width === w && hit.height === h) return;
  // Extend goes on its own pipeline: inside one, sharp would place it before the extract.
  await pad(s, hit.left - x, hit.top - y, x + w - (hit.left + hit.width), y + h - (hit.top + hit.height), bg);
}

export async function pad(s: Stage, left: number, top: number, right: number, bottom: number, bg: Rgba): Promise<void> {
  const img = await s.pipe();
  const alpha = s.hasAlpha || bg.alpha < 1;
  const base = alpha && !s.hasAlpha ? img.ensureAlpha() : img;
  s.commit(base.extend({ left, top, right, bottom, background: sharpColor(bg) }),
    s.width + left + right, s.height + top + bottom, alpha);
}

/** Resizes to exactly w×h (callers keep the ratio when they mean to). */
export async function resizeTo(s: Stage, w: number, h: number): Promise<void> {
  if (w === s.width && h === s.height) return;
  const img = await s.pipe();
  s.commit(img.resize({ width: w, height: h, fit: 'fill' }), w, h);
}

/** stretch=off|fill: never enlarge; fill then pads up to the requested size. */
async function finishStretch(s: Stage, tw: number, th: number): Promise<void> {
  if (s.stretch !== 'fill' || (s.width >= tw && s.height >= th)) return;
  const l = Math.floor(Math.max(0, tw - s.width) / 2);
  const t = Math.floor(Math.max(0, th - s.height) / 2);
  await pad(s, l, t, Math.max(0, tw - s.width) - l, Math.max(0, th - s.height) - t, s.background());
}

export const preview: OpDef<{ w?: number; h?: number }> = {
  kind: 'transform', sizing: true, svgGeometry: true, videoCompanion: true,
  parse(p) {
    expectCount('preview', p, 0, 1);
    return p.length === 0 ? {} : pixelDims('preview', p[0], false);
  },
  async apply(s, a) {
    const { w, h } = fitInside(s.width, s.height, a.w ?? 2048, a.h ?? 2048);
    await resizeTo(s, w, h);
  },
};

export const resize: OpDef<{ w?: number; h?: number }> = {
  kind: 'transform', sizing: true, svgGeometry: true, videoCompanion: true, stackable: true,
  parse(p) {
    expectCount('resize', p, 1, 1);
    const dims = pixelDims('resize', p[0], false);
    if (dims.w !== undefined && dims.h !== undefined) checkRequestedSize('resize', dims.w, dims.h);
    return dims;
  },
  async apply(s, a) {
    let tw = a.w ?? Math.max(1, Math.round((s.width * a.h!) / s.height));
    let th = a.h ?? Math.max(1, Math.round((s.height * a.w!) / s.width));
    const wantW = tw;
    const wantH = th;
    if (s.stretch !== 'on' && (tw > s.width || th > s.height)) {
      if (a.w !== undefined && a.h !== undefined) { tw = Math.min(tw, s.width); th = Math.min(th, s.height); }
      else { tw = s.width; th = s.height; }
    }
    await resizeTo(s, tw, th);
    await finishStretch(s, wantW, wantH);
  },
};

export const stretch: OpDef<'on' | 'off' | 'fill'> = {
  kind: 'state', stackable: true,
  parse: (p) => (expectCount('stretch', p, 1, 1), oneOf('stretch', 'mode', p[0], ['on', 'off', 'fill'] as const)),
  apply(s, a) {
    s.stretch = a;
  },
};

export const setfill: OpDef<Rgba> = {
  kind: 'state',
  parse: (p) => (expectCount('setfill', p, 1, 1), color('setfill', p[0])),
  apply(s, a) {
    s.fill = a;
  },
};

/** Scales to cover w×h, then cuts at the alignment, by saliency, or centred on a focus box. */
async function coverCrop(s: Stage, tw: number, th: number, where: Align | 'attention' | Box): Promise<void> {
  let k = Math.max(tw / s.width, th / s.height);
  if (s.stretch !== 'on') k = Math.min(k, 1);
  const rw = Math.max(1, Math.round(s.width * k));
  const rh = Math.max(1, Math.round(s.height * k));
  const cw = Math.min(tw, rw);
  const ch = Math.min(th, rh);
  // libvips scores the whole cover-scaled image before cutting: that image is an intermediate
  // too (scale_crop/3000x16384/smart_points of a 640x480 photo: 21845x16384, 358 Mpx, 20 s of work).
  if (where === 'attention') checkIntermediate(rw, rh);
  const img = await s.pipe();
  if (where === 'attention') {
    // libvips' attention strategy: crops towards skin tones, saturated colour and edges.
    s.commit(img.resize({ width: cw, height: ch, fit: 'cover', position: 'attention' }), cw, ch);
  } else {
    const { left, top } = 'width' in where
      ? { left: centredStart((where.x + where.width / 2) * (rw / s.width), cw, rw), top: centredStart((where.y + where.height / 2) * (rh / s.height), ch, rh) }
      : place(where, rw, rh, cw, ch);
    const box = { left: clamp(left, 0, rw - cw), top: clamp(top, 0, rh - ch), width: cw, height: ch };
    const resized = rw === s.width && rh === s.height ? img : img.resize({ width: rw, height: rh, fit: 'fill' });
    // extract() after resize() is sharp's documented post-resize extract: one pipeline is safe.
    s.commit(box.width === rw && box.height === rh ? resized : resized.extract(box), cw, ch);
  }
  await finishStretch(s, tw, th);
}

const clamp = (v: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, v));

const SMART_TYPES = [
  'smart', 'smart_faces_objects_points', 'smart_faces_objects', 'smart_faces_points', 'smart_objects_faces_points',
  'smart_objects_faces', 'smart_objects_points', 'smart_points', 'smart_objects', 'smart_faces',
] as const;

export interface ScaleCropArgs { w: number; h: number; type: (typeof SMART_TYPES)[number] | null; align: Align }
export const scale_crop: OpDef<ScaleCropArgs> = {
  kind: 'transform', sizing: true, svgGeometry: true, videoCompanion: true, stackable: true,
  parse(p) {
    expectCount('scale_crop', p, 1, 3);
    const { w, h } = pixelDims('scale_crop', p[0], true) as { w: number; h: number };
    checkRequestedSize('scale_crop', w, h);
    let rest = p.slice(1);
    let type: ScaleCropArgs['type'] = null;
    if (rest[0] !== undefined && !isAlign(rest[0])) {
      type = oneOf('scale_crop', 'type', rest[0], SMART_TYPES);
      rest = rest.slice(1);
    }
    if (rest.length > 1) throw bad('scale_crop', `unexpected parameter "${rest[1]}"`);
    const al = rest[0] !== undefined ? align('scale_crop', rest[0], { percentOnly: true }) : type ? CENTER : TOP_LEFT;
    return { w, h, type, align: al };
  },
  async apply(s, a) {
    // Smart types: faces, objects (detectors) and points (saliency) in the type's order; the first
    // that finds something decides, the alignment is the fallback.
    const focus = a.type ? await smartFocus(s, smartOrder(a.type)) : null;
    await coverCrop(s, a.w, a.h, focus ?? a.align);
  },
};

/**
 * Content-aware resize that extends rather than crops: the whole image is scaled to fit inside
 * w×h and the rest is filled by extending its edges, placed so the faces/objects found sit as
 * near the centre as the free space allows.
 */
export const smart_resize: OpDef<{ w: number; h: number }> = {
  kind: 'transform', sizing: true,
  parse(p) {
    expectCount('smart_resize', p, 1, 1);
    const dims = pixelDims('smart_resize', p[0], true) as { w: number; h: number };
    checkRequestedSize('smart_resize', dims.w, dims.h);
    return dims;
  },
  async apply(s, a) {
    const focus = await smartFocus(s, ['faces', 'objects']);
    const k = Math.min(a.w / s.width, a.h / s.height);
    const rw = Math.max(1, Math.min(a.w, Math.round(s.width * k)));
    const rh = Math.max(1, Math.min(a.h, Math.round(s.height * k)));
    const cx = focus && focus !== 'attention' ? (focus.x + focus.width / 2) * k : rw / 2;
    const cy = focus && focus !== 'attention' ? (focus.y + focus.height / 2) * k : rh / 2;
    const left = Math.min(a.w - rw, Math.max(0, Math.round(a.w / 2 - cx)));
    const top = Math.min(a.h - rh, Math.max(0, Math.round(a.h / 2 - cy)));
    await resizeTo(s, rw, rh);
    if (rw === a.w && rh === a.h) return;
    const img = await s.pipe();
    s.commit(img.extend({ left, top, right: a.w - rw - left, bottom: a.h - rh - top, extendWith: 'copy' }), a.w, a.h);
  },
};

export type CropArgs =
  | { kind: 'size'; size: Size; align: Align }
  | { kind: 'ratio'; x: number; y: number; align: Align }
  | { kind: 'object'; tag: string; ratio: { x: number; y: number } | null; size: Size | null; align: Align };
export const crop: OpDef<CropArgs> = {
  kind: 'transform', stackable: true, svgGeometry: true, videoCompanion: true,
  parse(p) {
    expectCount('crop', p, 1, 4);
    const first = p[0]!;
    if (/^[a-z_]+$/.test(first)) {
      if (!CROP_TAGS.includes(first)) throw bad('crop', `dimensions must look like WxH or N:M, or a tag (face, image or an object class), got "${first}"`);
      return objectCrop(p);
    }
    expectCount('crop', p, 1, 2);
    if (first.includes(':')) {
      const r = ratio('crop', first);
      return { kind: 'ratio', ...r, align: p[1] !== undefined ? align('crop', p[1]) : CENTER };
    }
    const wh = size('crop', first);
    if (wh.w.unit === 'px' && wh.h.unit === 'px') checkRequestedSize('crop', wh.w.value, wh.h.value);
    return { kind: 'size', size: wh, align: p[1] !== undefined ? align('crop', p[1], { negative: true }) : TOP_LEFT };
  },
  async apply(s, a) {
    if (a.kind === 'object') return cropToObjects(s, a);
    const { w, h } = a.kind === 'ratio' ? fitRatio(s.width, s.height, a.x, a.y)
      : { w: Math.max(1, resolve(a.size.w, s.width)), h: Math.max(1, resolve(a.size.h, s.height)) };
    if (w > MAX_PARAM_PX || h > MAX_PARAM_PX) throw bad('crop', `resulting size ${w}x${h} is too large`);
    const { left, top } = place(a.align, s.width, s.height, w, h);
    await cropBox(s, left, top, w, h);
  },
};

/** `crop/<tag>[/N:M | /WpxHp][/alignment]` */
function objectCrop(p: readonly string[]): CropArgs {
  expectCount('crop', p, 1, 3);
  let rest = p.slice(1);
  let r: { x: number; y: number } | null = null;
  let sz: Size | null = null;
  if (rest[0] !== undefined && !isAlign(rest[0])) {
    if (rest[0].includes(':')) r = ratio('crop', rest[0]);
    else {
      sz = size('crop', rest[0]);
      if (sz.w.unit !== 'p' || sz.h.unit !== 'p') throw bad('crop', `the size around an object is a percent of its box like 150px150p, got "${rest[0]}"`);
    }
    rest = rest.slice(1);
  }
  if (rest.length > 1) throw bad('crop', `unexpected parameter "${rest[1]}"`);
  return { kind: 'object', tag: p[0]!, ratio: r, size: sz, align: rest[0] !== undefined ? align('crop', rest[0]) : CENTER };
}

/**
 * Cuts the box around the tagged objects (all of them): as found, grown to a ratio, or sized in
 * percent of their box; the alignment places the objects inside the cut. Kept inside the image;
 * nothing found leaves the image as it is.
 */
async function cropToObjects(s: Stage, a: CropArgs & { kind: 'object' }): Promise<void> {
  const box = union(await tagged(s, a.tag));
  if (!box) return;
  let w = box.width;
  let h = box.height;
  if (a.ratio) {
    // The smallest box of the ratio holding the objects, at most the largest that fits the image.
    if (w * a.ratio.y >= h * a.ratio.x) h = Math.round((w * a.ratio.y) / a.ratio.x);
    else w = Math.round((h * a.ratio.x) / a.ratio.y);
    if (w > s.width || h > s.height) ({ w, h } = fitRatio(s.width, s.height, a.ratio.x, a.ratio.y));
  } else if (a.size) {
    w = Math.max(1, Math.round((box.width * a.size.w.value) / 100));
    h = Math.max(1, Math.round((box.height * a.size.h.value) / 100));
  }
  w = Math.min(w, s.width);
  h = Math.min(h, s.height);
  const inside = place(a.align, w, h, box.width, box.height);
  const left = clamp(box.x - inside.left, 0, s.width - w);
  const top = clamp(box.y - inside.top, 0, s.height - h);
  await cropBox(s, left, top, w, h);
}

export const trim: OpDef<{ tolerance: number; padding: number }> = {
  kind: 'transform',
  parse(p) {
    if (p.length !== 0 && p.length !== 2) throw bad('trim', `expects no parameters or tolerance/padding, got ${p.length}`);
    if (p.length === 0) return { tolerance: 10, padding: 0 };
    return { tolerance: int('trim', 'tolerance', p[0], 0, 255), padding: int('trim', 'padding', p[1], 0, 1000) };
  },
  async apply(s, a) {
    // Trimmed wherever the stage maps pixels: in a worker on scratch files when the image is large
    // (trim-step.ts), so only the trimmed size comes back here, never the pixels.
    await s.mapPixels({ kind: 'trim', threshold: a.tolerance });
    if (a.padding > 0) await pad(s, a.padding, a.padding, a.padding, a.padding, s.background());
  },
};

/**
 * Zooms in on what the detectors find (objects and faces): `zoom` is how much of the result the
 * objects' box fills, in percent of its width or height; the image keeps its size and ratio.
 * Nothing found, or a box that already fills that much, leaves the image as it is.
 */
export const zoom_objects: OpDef<number> = {
  kind: 'transform',
  parse(p) {
    expectCount('zoom_objects', p, 1, 1);
    return int('zoom_objects', 'zoom', p[0], 1, 100);
  },
  async apply(s, zoom) {
    const box = union([...(await s.detect('objects')), ...(await s.detect('faces'))]);
    if (!box) return;
    const W = s.width;
    const H = s.height;
    // The window holding the box at `zoom` percent, widened to the image's ratio.
    let w = (box.width * 100) / zoom;
    let h = (box.height * 100) / zoom;
    if (w / h > W / H) h = (w * H) / W;
    else w = (h * W) / H;
    w = Math.min(W, Math.max(1, Math.round(w)));
    h = Math.min(H, Math.max(1, Math.round(h)));
    if (w >= W && h >= H) return;
    await cropBox(s, centredStart(box.x + box.width / 2, w, W), centredStart(box.y + box.height / 2, h, H), w, h);
    await resizeTo(s, W, H);
  },
};
