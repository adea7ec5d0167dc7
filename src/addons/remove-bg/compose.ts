/**
 * What remove_bg does after the model: region of interest, hard edges, crop with margin, scale and
 * position, shadow, alpha-only output. Runs in the child process (pixel loops stay off the
 * server's event loop); `rgba` is the model's cut-out at the source's size.
 */
import type { Sharp } from 'sharp';
import sharp from '../../media/lazy-sharp.js';
import type { Length, RemoveBgParams } from './params.js';

export interface Rgba {
  data: Buffer;
  width: number;
  height: number;
}

/** Alpha at or below this counts as background when finding the subject's box. */
const SUBJECT_ALPHA = 16;

const toPx = (l: Length, size: number): number => ('px' in l ? l.px : Math.round(l.fraction * size));

export function applyRoi(img: Rgba, roi: NonNullable<RemoveBgParams['roi']>): void {
  const x1 = Math.min(toPx(roi.x1, img.width), img.width);
  const y1 = Math.min(toPx(roi.y1, img.height), img.height);
  const x2 = Math.min(toPx(roi.x2, img.width), img.width);
  const y2 = Math.min(toPx(roi.y2, img.height), img.height);
  for (let y = 0; y < img.height; y++) {
    for (let x = 0; x < img.width; x++) {
      if (x < x1 || x >= x2 || y < y1 || y >= y2) img.data[(y * img.width + x) * 4 + 3] = 0;
    }
  }
}

export function hardenAlpha(img: Rgba): void {
  for (let i = 3; i < img.data.length; i += 4) img.data[i] = img.data[i]! >= 128 ? 255 : 0;
}

export function subjectBox(img: Rgba): { left: number; top: number; width: number; height: number } | null {
  let minX = img.width;
  let minY = img.height;
  let maxX = -1;
  let maxY = -1;
  for (let y = 0; y < img.height; y++) {
    for (let x = 0; x < img.width; x++) {
      if (img.data[(y * img.width + x) * 4 + 3]! > SUBJECT_ALPHA) {
        if (x < minX) minX = x;
        if (x > maxX) maxX = x;
        if (y < minY) minY = y;
        if (y > maxY) maxY = y;
      }
    }
  }
  return maxX < 0 ? null : { left: minX, top: minY, width: maxX - minX + 1, height: maxY - minY + 1 };
}

const raw = (img: Rgba) => sharp(img.data, { raw: { width: img.width, height: img.height, channels: 4 } });

async function toRgba(s: Sharp): Promise<Rgba> {
  const { data, info } = await s.ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** A transparent canvas with `part` drawn at (left, top) (parts outside the canvas are clipped). */
async function place(part: Rgba, width: number, height: number, left: number, top: number): Promise<Rgba> {
  const canvas = sharp({ create: { width, height, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } });
  // Clip to the canvas first: sharp refuses an overlay reaching outside it.
  const cl = Math.max(0, -left);
  const ct = Math.max(0, -top);
  const cw = Math.min(part.width - cl, width - Math.max(0, left));
  const ch = Math.min(part.height - ct, height - Math.max(0, top));
  if (cw <= 0 || ch <= 0) return toRgba(canvas);
  const clipped = await raw(part).extract({ left: cl, top: ct, width: cw, height: ch }).png().toBuffer();
  return toRgba(canvas.composite([{ input: clipped, left: Math.max(0, left), top: Math.max(0, top) }]));
}

async function addShadow(img: Rgba): Promise<Rgba> {
  const alpha = Buffer.alloc(img.width * img.height);
  for (let i = 0; i < alpha.length; i++) alpha[i] = img.data[i * 4 + 3]!;
  const size = Math.min(img.width, img.height);
  const offset = Math.max(1, Math.round(size * 0.02));
  const blurred = await sharp(alpha, { raw: { width: img.width, height: img.height, channels: 1 } })
    .blur(Math.max(0.3, size * 0.01))
    .raw()
    .toBuffer();
  const shadow = Buffer.alloc(img.data.length);
  for (let y = 0; y < img.height; y++) {
    for (let x = 0; x < img.width; x++) {
      const sx = x - offset;
      const sy = y - offset;
      const a = sx >= 0 && sy >= 0 ? blurred[sy * img.width + sx]! : 0;
      shadow[(y * img.width + x) * 4 + 3] = Math.round(a * 0.5);
    }
  }
  const top = await raw(img).png().toBuffer();
  return toRgba(raw({ data: shadow, width: img.width, height: img.height }).composite([{ input: top }]));
}

/** The final PNG for the params. */
export async function compose(cut: Rgba, p: RemoveBgParams): Promise<{ png: Buffer; width: number; height: number }> {
  let img = cut;
  if (p.roi) applyRoi(img, p.roi);
  if (!p.semitransparency) hardenAlpha(img);
  const box = subjectBox(img);
  if (box && p.crop) {
    const mx = 'px' in p.cropMargin ? p.cropMargin.px : Math.round(p.cropMargin.fraction * box.width);
    const my = 'px' in p.cropMargin ? p.cropMargin.px : Math.round(p.cropMargin.fraction * box.height);
    img = await place(img, box.width + 2 * mx, box.height + 2 * my, mx - box.left, my - box.top);
  } else if (box && (p.scale !== null || p.position !== null)) {
    let subject = await toRgba(raw(img).extract(box));
    if (p.scale !== null) {
      const w = Math.max(1, Math.round(img.width * p.scale));
      const h = Math.max(1, Math.round(img.height * p.scale));
      subject = await toRgba(raw(subject).resize(w, h, { fit: 'inside' }));
    }
    const pos = p.position ?? { x: box.left / Math.max(1, img.width - box.width), y: box.top / Math.max(1, img.height - box.height) };
    const left = Math.round(pos.x * (img.width - subject.width));
    const top = Math.round(pos.y * (img.height - subject.height));
    img = await place(subject, img.width, img.height, left, top);
  }
  if (p.addShadow) img = await addShadow(img);
  if (p.channels === 'alpha') {
    const alpha = Buffer.alloc(img.width * img.height);
    for (let i = 0; i < alpha.length; i++) alpha[i] = img.data[i * 4 + 3]!;
    // Said explicitly: a one-band raw image is otherwise written as RGB.
    const png = await sharp(alpha, { raw: { width: img.width, height: img.height, channels: 1 } }).toColourspace('b-w').png().toBuffer();
    return { png, width: img.width, height: img.height };
  }
  return { png: await raw(img).png().toBuffer(), width: img.width, height: img.height };
}
