/**
 * Text overlay and its companions font, text_align, text_box. Text is laid out in an SVG that
 * librsvg renders with the system fonts (DejaVu and Noto from Debian's fonts-dejavu-core,
 * fonts-noto-core, fonts-noto-mono); every piece of user text is XML-escaped first.
 */
import { DEFAULT_TEXT, type OpDef, type TextStyle } from '../pipeline/types.js';
import { type Align, type Rgba, type Size, align, bad, color, expectCount, int, oneOf, size } from '../pipeline/params.js';
import { intersect, place, resolve } from '../pipeline/place.js';

export const FAMILIES: Readonly<Record<string, string>> = {
  dejavu: 'DejaVu Sans', dejavumono: 'DejaVu Sans Mono', dejavuserif: 'DejaVu Serif',
  noto: 'Noto Sans', notomono: 'Noto Mono', notoserif: 'Noto Serif',
};


export interface FontArgs { reset: boolean; weight?: 'regular' | 'bold'; style?: 'normal' | 'italic'; size?: number; color?: Rgba; family?: string }

export const font: OpDef<FontArgs> = {
  kind: 'state', stackable: true,
  parse(p) {
    expectCount('font', p, 1, 6);
    const out: FontArgs = { reset: false };
    // Optional tokens in a fixed order: reset, weight, style, size, colour, family.
    let slot = 0;
    for (const t of p) {
      const tl = t.toLowerCase();
      if (slot <= 0 && tl === 'reset') { out.reset = true; slot = 1; }
      else if (slot <= 1 && (tl === 'regular' || tl === 'bold')) { out.weight = tl; slot = 2; }
      else if (slot <= 2 && (tl === 'normal' || tl === 'italic')) { out.style = tl; slot = 3; }
      else if (slot <= 3 && /^\d+$/.test(tl)) { out.size = int('font', 'size', tl, 1, 1000); slot = 4; }
      else if (slot <= 4 && /^[0-9a-f]+$/.test(tl)) { out.color = color('font', tl); slot = 5; }
      else if (slot <= 5 && Object.hasOwn(FAMILIES, tl)) { out.family = FAMILIES[tl]!; slot = 6; }
      else throw bad('font', `unexpected or misplaced parameter "${t}" (order: reset, regular|bold, normal|italic, size, color, family)`);
    }
    return out;
  },
  apply(s, a) {
    const base = a.reset ? { ...DEFAULT_TEXT, alignH: s.text.alignH, alignV: s.text.alignV, box: s.text.box, boxColor: s.text.boxColor, boxPadding: s.text.boxPadding } : s.text;
    s.text = {
      ...base, ...(a.weight && { weight: a.weight }), ...(a.style && { style: a.style }),
      ...(a.size && { size: a.size }), ...(a.color && { color: a.color }), ...(a.family && { family: a.family }),
    };
  },
};

export const text_align: OpDef<{ h: TextStyle['alignH']; v?: TextStyle['alignV'] }> = {
  kind: 'state', stackable: true,
  parse(p) {
    expectCount('text_align', p, 1, 2);
    const h = oneOf('text_align', 'horizontal alignment', p[0], ['left', 'center', 'right'] as const);
    return p[1] === undefined ? { h } : { h, v: oneOf('text_align', 'vertical alignment', p[1], ['top', 'center', 'bottom'] as const) };
  },
  apply(s, a) {
    s.text = { ...s.text, alignH: a.h, ...(a.v && { alignV: a.v }) };
  },
};

export const text_box: OpDef<{ mode: TextStyle['box']; color?: Rgba; padding?: number }> = {
  kind: 'state', stackable: true,
  parse(p) {
    expectCount('text_box', p, 1, 3);
    const mode = oneOf('text_box', 'mode', p[0], ['none', 'fit', 'line', 'fill'] as const);
    return {
      mode,
      ...(p[1] !== undefined && { color: color('text_box', p[1]) }),
      ...(p[2] !== undefined && { padding: int('text_box', 'padding', p[2], 0, 1000) }),
    };
  },
  apply(s, a) {
    s.text = { ...s.text, box: a.mode, ...(a.color && { boxColor: a.color }), ...(a.padding !== undefined && { boxPadding: a.padding }) };
  },
};

/** `~~` -> `~`, `~s` -> `/`, `~n` -> newline (the client's escaping of path-unsafe text). */
export function unescapeText(raw: string): string {
  return raw.replace(/~(.)/gs, (m, c: string) => (c === '~' ? '~' : c === 's' ? '/' : c === 'n' ? '\n' : m));
}

/** XML text content and attribute escaping; characters XML 1.0 forbids are dropped. */
export function escapeXml(t: string): string {
  return t
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')
    .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

const rgba = (c: Rgba): string => `rgb(${c.r},${c.g},${c.b})" fill-opacity="${c.alpha}`;

export interface View { x: number; y: number; width: number; height: number }

/**
 * Lays the text out in a w×h box, as an SVG of the `view` part of that box (all of it by
 * default). Widths are estimated at 0.6 em per character.
 */
export function textSvg(lines: string[], w: number, h: number, st: TextStyle, view: View = { x: 0, y: 0, width: w, height: h }): string {
  const pad = st.box === 'none' ? 0 : st.boxPadding;
  const longest = Math.max(1, ...lines.map((l) => [...l].length));
  const auto = Math.min((h - 2 * pad) / (lines.length * 1.25), (w - 2 * pad) / (longest * 0.6));
  const fs = Math.max(1, Math.floor(st.size ?? auto));
  const lh = fs * 1.25;
  const blockH = lines.length * lh;
  const y0 = st.alignV === 'top' ? pad : st.alignV === 'bottom' ? h - pad - blockH : (h - blockH) / 2;
  const anchor = st.alignH === 'left' ? 'start' : st.alignH === 'right' ? 'end' : 'middle';
  const x = st.alignH === 'left' ? pad : st.alignH === 'right' ? w - pad : w / 2;
  const lineW = (l: string): number => Math.min(w, [...l].length * 0.6 * fs);
  const left = (lw: number): number => (st.alignH === 'left' ? pad : st.alignH === 'right' ? w - pad - lw : (w - lw) / 2);
  const parts: string[] = [];
  if (st.box === 'fill') parts.push(`<rect width="${w}" height="${h}" fill="${rgba(st.boxColor)}"/>`);
  if (st.box === 'fit') {
    const bw = Math.max(...lines.map(lineW));
    parts.push(`<rect x="${left(bw) - pad}" y="${y0 - pad}" width="${bw + 2 * pad}" height="${blockH + 2 * pad}" fill="${rgba(st.boxColor)}"/>`);
  }
  lines.forEach((l, i) => {
    const y = y0 + i * lh;
    if (st.box === 'line' && l.length) {
      parts.push(`<rect x="${left(lineW(l)) - pad}" y="${y}" width="${lineW(l) + 2 * pad}" height="${lh}" fill="${rgba(st.boxColor)}"/>`);
    }
    parts.push(`<text x="${x}" y="${y + fs}" xml:space="preserve">${escapeXml(l)}</text>`);
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${view.width}" height="${view.height}" viewBox="${view.x} ${view.y} ${view.width} ${view.height}"><g font-family="${escapeXml(st.family)}" font-size="${fs}" font-weight="${st.weight === 'bold' ? 'bold' : 'normal'}" font-style="${st.style}" text-anchor="${anchor}" fill="${rgba(st.color)}">${parts.join('')}</g></svg>`;
}

export interface TextArgs { size: Size; at: Align; text: string }
export const text: OpDef<TextArgs> = {
  kind: 'transform', stackable: true,
  parse(p) {
    if (p.length < 3) throw bad('text', 'expects WxH/X,Y/text');
    // The text itself may contain no `/`: clients write it as `~s`. Extra segments are refused.
    expectCount('text', p, 3, 3);
    const t = unescapeText(p[2]!);
    if (t.length > 2000) throw bad('text', 'text is longer than 2000 characters');
    return { size: size('text', p[0]), at: align('text', p[1]!, { negative: true }), text: t };
  },
  async apply(s, a) {
    const w = Math.max(1, resolve(a.size.w, s.width));
    const h = Math.max(1, resolve(a.size.h, s.height));
    const { left, top } = place(a.at, s.width, s.height, w, h);
    // Only the part of the box that lands on the image is drawn: a 3001x3000 box on a 640x480
    // photo used to be rasterized whole, then cut on the main thread (~200 ms of stall).
    const hit = intersect(left, top, w, h, s.width, s.height);
    if (!hit) return;
    const svg = textSvg(a.text.split('\n'), w, h, s.text, { x: hit.left - left, y: hit.top - top, width: hit.width, height: hit.height });
    // libvips rasterises the SVG while compositing, in its own threads: read out with raw() here, the
    // box (as large as the image for a 100px100p box) was an RGBA buffer on the main thread.
    const img = await s.pipe();
    s.commit(img.composite([{ input: Buffer.from(svg), left: hit.left, top: hit.top }]), s.width, s.height);
  },
};
