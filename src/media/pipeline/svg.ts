/**
 * SVG input (spec rule 4). Without `rasterize` an SVG stays an SVG: only crop, preview, resize and
 * scale_crop change its width/height/viewBox; other operations leave the body alone. Every SVG we
 * serve or rasterize is sanitised first (svg-sanitize.ts), so the text seen here is the
 * re-serialised, allow-listed tree.
 */
import type { PlanStep } from '../plan.js';
import type { CropArgs, ScaleCropArgs } from '../operations/geometry.js';
import { CENTER, fitInside, fitRatio, place, resolve } from './place.js';
import { sanitizeSvgCounted } from './svg-sanitize.js';
import { imageErrors } from '../../core/error-catalogue/media.js';

const UNIT_PX: Record<string, number> = { '': 1, px: 1, pt: 4 / 3, pc: 16, in: 96, cm: 96 / 2.54, mm: 96 / 25.4, em: 16, ex: 8 };

function lengthPx(v: string | undefined): number | null {
  const m = v ? /^\s*([\d.]+(?:e[-+]?\d+)?)\s*(px|pt|pc|in|cm|mm|em|ex)?\s*$/i.exec(v) : null;
  if (!m) return null;
  const n = Number(m[1]) * UNIT_PX[(m[2] ?? '').toLowerCase()]!;
  return Number.isFinite(n) && n > 0 ? n : null;
}

interface Root { start: number; end: number; attrs: Map<string, string> }

function findRoot(text: string): Root {
  const start = text.search(/<svg[\s>]/i);
  if (start === -1) throw imageErrors.invalid('Not an SVG image: no <svg> element.');
  const end = text.indexOf('>', start);
  const attrs = new Map<string, string>();
  for (const m of text.slice(start + 4, end).matchAll(/([\w:-]+)\s*=\s*("([^"]*)"|'([^']*)')/g)) attrs.set(m[1]!, m[3] ?? m[4] ?? '');
  return { start, end, attrs };
}

export interface SvgBox { width: number; height: number; view: [number, number, number, number] }

/** Declared size in px and view box; percent or missing sizes fall back to the viewBox, then 300x150. */
export function svgBox(text: string): SvgBox {
  const { attrs } = findRoot(text);
  const vb = (attrs.get('viewBox') ?? '').trim().split(/[\s,]+/).map(Number);
  const view = vb.length === 4 && vb.every(Number.isFinite) && vb[2]! > 0 && vb[3]! > 0 ? (vb as [number, number, number, number]) : null;
  let w = lengthPx(attrs.get('width'));
  let h = lengthPx(attrs.get('height'));
  if (w === null && h === null) { w = view?.[2] ?? 300; h = view?.[3] ?? 150; }
  else if (w === null) w = view ? (h! * view[2]) / view[3] : 300;
  else if (h === null) h = view ? (w * view[3]) / view[2] : 150;
  return { width: Math.max(1, Math.round(w)), height: Math.max(1, Math.round(h!)), view: view ?? [0, 0, w, h!] };
}

/** Applies the geometric operations to the attributes; returns the new SVG and its size. */
export function transformSvg(text: string, steps: PlanStep[], implicitPreview: { width: number; height: number } | null): { svg: string; width: number; height: number } {
  const box = svgBox(text);
  let { width: w, height: h } = box;
  let [vx, vy, vw, vh] = box.view;
  let stretchFree = false;
  const cut = (l: number, t: number, cw: number, ch: number, W: number, H: number): void => {
    const sx = vw / W, sy = vh / H;
    [vx, vy, vw, vh] = [vx + l * sx, vy + t * sy, cw * sx, ch * sy];
  };
  for (const s of steps) {
    if (s.name === 'resize') {
      const a = s.args as { w?: number; h?: number };
      const nw = a.w ?? Math.round((w * a.h!) / h);
      const nh = a.h ?? Math.round((h * a.w!) / w);
      if (a.w !== undefined && a.h !== undefined) stretchFree = true;
      [w, h] = [nw, nh];
    } else if (s.name === 'preview') {
      const a = s.args as { w?: number; h?: number };
      ({ w, h } = fitInside(w, h, a.w ?? 2048, a.h ?? 2048));
    } else if (s.name === 'crop' && (s.args as CropArgs).kind !== 'object') {
      // Crop by object needs the detectors, which see raster images only: it leaves these as they are.
      const a = s.args as Exclude<CropArgs, { kind: 'object' }>;
      const c = a.kind === 'ratio' ? fitRatio(w, h, a.x, a.y) : { w: resolve(a.size.w, w), h: resolve(a.size.h, h) };
      const { left, top } = place(a.align, w, h, c.w, c.h);
      cut(left, top, c.w, c.h, w, h);
      [w, h] = [c.w, c.h];
    } else if (s.name === 'scale_crop') {
      const a = s.args as ScaleCropArgs;
      const k = Math.max(a.w / w, a.h / h);
      const { left, top } = place(a.type ? CENTER : a.align, w * k, h * k, a.w, a.h);
      cut(left / k, top / k, a.w / k, a.h / k, w, h);
      [w, h] = [a.w, a.h];
    }
  }
  if (implicitPreview) ({ w, h } = fitInside(w, h, implicitPreview.width, implicitPreview.height));
  const root = findRoot(text);
  root.attrs.set('width', String(w));
  root.attrs.set('height', String(h));
  root.attrs.set('viewBox', [vx, vy, vw, vh].map((n) => +n.toFixed(4)).join(' '));
  if (stretchFree) root.attrs.set('preserveAspectRatio', 'none');
  const attrText = [...root.attrs].map(([k, v]) => `${k}="${v.replace(/"/g, '&quot;')}"`).join(' ');
  const selfClosing = text[root.end - 1] === '/' ? '/' : '';
  const svg = `${text.slice(0, root.start)}<svg ${attrText}${selfClosing}>${text.slice(root.end + 1)}`;
  return { svg, width: w, height: h };
}

/** Geometry to apply to an SVG served as SVG: its sizing operations, or the implicit preview. */
export interface SvgTransform { steps: PlanStep[]; preview: { width: number; height: number } | null }
export interface PreparedSvg { svg: string; elements: number; width: number; height: number }

/** Sanitises an SVG and, with `transform`, applies its geometry (width/height 0 without one). */
export function prepareSvg(text: string, transform: SvgTransform | null): PreparedSvg {
  const { svg, elements } = sanitizeSvgCounted(text);
  if (!transform) return { svg, elements, width: 0, height: 0 };
  return { ...transformSvg(svg, transform.steps, transform.preview), elements };
}
