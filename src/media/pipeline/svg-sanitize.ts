/**
 * SVG sanitiser built on an XML parser (saxes, namespace-aware) and allow-lists by namespace URI
 * and local name; the kept tree is serialised anew, so nothing the parser did not understand
 * survives, whatever its spelling or prefix. Refused outright (400): entity declarations (billion
 * laughs, XXE) and anything that is not well-formed XML. Removed with their subtree: every element
 * outside the SVG allow-list (scripts under any prefix, foreignObject, XHTML, unknown namespaces)
 * and SMIL animations that target a link or an event handler. Removed attributes: anything not
 * allow-listed (event handlers, xml:base, unknown namespaces), links that leave the document, and
 * `javascript:` values. CSS in `style` keeps only local `url()`s and no `@import`. librsvg would
 * resolve a relative reference against a file's directory: a blob store neighbour must never be
 * readable, so only `#fragment` and inline raster `data:` references remain.
 */
import { SaxesParser, type SaxesAttributeNS, type SaxesTagNS } from 'saxes';
import { AppError } from '../../core/errors.js';
import { MAX_SVG_DEPTH } from '../limits.js';
import { imageErrors } from '../../core/error-catalogue/media.js';

export const SVG_NS = 'http://www.w3.org/2000/svg';
const XLINK_NS = 'http://www.w3.org/1999/xlink';
const XML_NS = 'http://www.w3.org/XML/1998/namespace';
const XLINK_HREF = 'xlink:href';

const ELEMENTS = new Set([
  'svg', 'g', 'defs', 'symbol', 'use', 'switch', 'a', 'title', 'desc', 'metadata', 'view', 'style',
  'path', 'rect', 'circle', 'ellipse', 'line', 'polyline', 'polygon', 'image', 'marker', 'pattern',
  'clipPath', 'mask', 'linearGradient', 'radialGradient', 'stop', 'text', 'tspan', 'textPath',
  'filter', 'feBlend', 'feColorMatrix', 'feComponentTransfer', 'feComposite', 'feConvolveMatrix',
  'feDiffuseLighting', 'feDisplacementMap', 'feDistantLight', 'feDropShadow', 'feFlood', 'feFuncA',
  'feFuncB', 'feFuncG', 'feFuncR', 'feGaussianBlur', 'feImage', 'feMerge', 'feMergeNode',
  'feMorphology', 'feOffset', 'fePointLight', 'feSpecularLighting', 'feSpotLight', 'feTile',
  'feTurbulence', 'animate', 'animateMotion', 'animateTransform', 'set', 'mpath',
]);

const ANIMATIONS = new Set(['animate', 'animateMotion', 'animateTransform', 'set']);

/** Attributes without a namespace: geometry, presentation, filters, gradients, text, animation timing. */
const ATTRIBUTES = new Set([
  'accent-height', 'accumulate', 'additive', 'alignment-baseline', 'amplitude', 'ascent', 'attributeName',
  'attributeType', 'azimuth', 'baseFrequency', 'baseline-shift', 'baseProfile', 'begin', 'bias', 'by',
  'calcMode', 'class', 'clip', 'clip-path', 'clip-rule', 'clipPathUnits', 'color', 'color-interpolation',
  'color-interpolation-filters', 'color-profile', 'color-rendering', 'cx', 'cy', 'd', 'diffuseConstant',
  'direction', 'display', 'divisor', 'dominant-baseline', 'dur', 'dx', 'dy', 'edgeMode', 'elevation',
  'enable-background', 'end', 'exponent', 'fill', 'fill-opacity', 'fill-rule', 'filter', 'filterUnits',
  'flood-color', 'flood-opacity', 'font', 'font-family', 'font-size', 'font-size-adjust', 'font-stretch',
  'font-style', 'font-variant', 'font-weight', 'fr', 'from', 'fx', 'fy', 'gradientTransform',
  'gradientUnits', 'height', 'href', 'id', 'image-rendering', 'in', 'in2', 'intercept', 'k', 'k1', 'k2',
  'k3', 'k4', 'kernelMatrix', 'kernelUnitLength', 'kerning', 'keyPoints', 'keySplines', 'keyTimes', 'lang',
  'lengthAdjust', 'letter-spacing', 'lighting-color', 'limitingConeAngle', 'marker', 'marker-end',
  'marker-mid', 'marker-start', 'markerHeight', 'markerUnits', 'markerWidth', 'mask', 'mask-type',
  'maskContentUnits', 'maskUnits', 'max', 'media', 'min', 'mode', 'numOctaves', 'offset', 'opacity',
  'operator', 'order', 'orient', 'overflow', 'paint-order', 'path', 'pathLength', 'patternContentUnits',
  'patternTransform', 'patternUnits', 'pointer-events', 'points', 'pointsAtX', 'pointsAtY', 'pointsAtZ',
  'preserveAlpha', 'preserveAspectRatio', 'primitiveUnits', 'r', 'radius', 'refX', 'refY', 'repeatCount',
  'repeatDur', 'requiredExtensions', 'requiredFeatures', 'restart', 'result', 'rotate', 'rx', 'ry',
  'scale', 'seed', 'shape-rendering', 'spacing', 'specularConstant', 'specularExponent', 'spreadMethod',
  'startOffset', 'stdDeviation', 'stitchTiles', 'stop-color', 'stop-opacity', 'stroke',
  'stroke-dasharray', 'stroke-dashoffset', 'stroke-linecap', 'stroke-linejoin', 'stroke-miterlimit',
  'stroke-opacity', 'stroke-width', 'style', 'surfaceScale', 'systemLanguage', 'tableValues', 'targetX',
  'targetY', 'text-anchor', 'text-decoration', 'text-rendering', 'textLength', 'to', 'transform',
  'transform-origin', 'type', 'values', 'vector-effect', 'version', 'viewBox', 'visibility', 'width',
  'word-spacing', 'writing-mode', 'x', 'x1', 'x2', 'xChannelSelector', 'y', 'y1', 'y2', 'yChannelSelector',
  'z', 'zoomAndPan',
]);
const XML_ATTRIBUTES = new Set(['space', 'lang']);

const invalid = (why: string): AppError => imageErrors.invalid(`Not a valid SVG image: ${why.replace(/\.$/, '')}.`);

export const isLocalRef = (v: string): boolean => /^\s*(#|data:image\/(png|jpeg|gif|webp);)/i.test(v);

/** CSS (a `style` attribute or element): no `@import`, and only local `url()`s. */
function safeCss(css: string): string {
  return css
    .replace(/@import[^;]*;?/gi, '')
    .replace(/url\(\s*(['"]?)([^)'"]*)\1\s*\)/gi, (m, _q, v: string) => (isLocalRef(v) ? m : 'none'));
}

const escapeText = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeAttr = (s: string): string => escapeText(s).replace(/"/g, '&quot;').replace(/\t/g, '&#9;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;');

/** An element is kept when it is an allow-listed SVG element (no namespace is read as SVG). */
function keepsElement(tag: SaxesTagNS): boolean {
  if (tag.uri !== SVG_NS && tag.uri !== '') return false;
  if (!ELEMENTS.has(tag.local)) return false;
  if (ANIMATIONS.has(tag.local)) {
    // SMIL may rewrite a link or a handler after sanitising: <set attributeName="href" to="javascript:…">.
    const target = Object.values(tag.attributes).find((a) => a.uri === '' && a.local === 'attributeName')?.value ?? '';
    const local = target.trim().replace(/^[^:]*:/, '').toLowerCase();
    if (local === 'href' || local.startsWith('on') || local === 'style') return false;
  }
  return true;
}

/** The attribute as serialised (`name="value"`), or null when it is dropped. */
function keptAttribute(a: SaxesAttributeNS): string | null {
  if (/javascript:|vbscript:/i.test(a.value.replace(/[\s\u0000-\u001f]/g, ''))) return null;
  let name: string;
  if (a.uri === '') {
    if (!ATTRIBUTES.has(a.local)) return null;
    name = a.local;
  } else if (a.uri === XLINK_NS && a.local === 'href') {
    name = XLINK_HREF;
  } else if (a.uri === XML_NS && XML_ATTRIBUTES.has(a.local)) {
    name = `xml:${a.local}`;
  } else {
    return null; // namespace declarations are rewritten on the root; other namespaces dropped
  }
  if (a.local === 'href' && !isLocalRef(a.value)) return null;
  const value = a.value.includes('url(') || a.local === 'style' ? safeCss(a.value) : a.value;
  return `${name}="${escapeAttr(value)}"`;
}

export function sanitizeSvg(text: string): string {
  return sanitizeSvgCounted(text).svg;
}

/** The sanitised SVG and how many elements it kept (rasterizing cost grows with them). */
export function sanitizeSvgCounted(text: string): { svg: string; elements: number } {
  // Before parsing: an entity declaration is refused even where a parser would skip it.
  if (/<!ENTITY/i.test(text)) throw imageErrors.invalid('SVG files with entity declarations are refused.');
  // Many SVGs use xlink:href without declaring the prefix; librsvg accepts them, so do we.
  const parser = new SaxesParser({ xmlns: true, position: false, additionalNamespaces: { xlink: XLINK_NS } });
  const out: string[] = [];
  /** Per open element: whether it is kept, and whether its start tag is still open (`<x …` without `>`). */
  const open: { kept: boolean; name: string; pending: boolean }[] = [];
  let dropDepth = 0;
  let elements = 0;
  let sawRoot = false;
  let usesXlink = false;
  const closePending = (): void => {
    const top = open[open.length - 1];
    if (top?.pending) { out.push('>'); top.pending = false; }
  };
  parser.on('doctype', (d) => {
    if (/<!ENTITY/i.test(d)) throw imageErrors.invalid('SVG files with entity declarations are refused.');
  });
  // Before the parser resolves the new element's namespace (a walk up its ancestors).
  parser.on('opentagstart', () => {
    if (open.length >= MAX_SVG_DEPTH) throw invalid(`elements nested deeper than ${MAX_SVG_DEPTH} levels`);
  });
  parser.on('opentag', (tag) => {
    if (dropDepth > 0 || !keepsElement(tag)) {
      dropDepth++;
      open.push({ kept: false, name: tag.local, pending: false });
      return;
    }
    closePending();
    const attrs = Object.values(tag.attributes).map(keptAttribute).filter((x): x is string => x !== null);
    usesXlink ||= attrs.some((a) => a.startsWith(XLINK_HREF));
    if (!sawRoot) {
      if (tag.local !== 'svg') throw invalid('the root element is not <svg>');
      // Prefixes are not carried over: kept elements are written unprefixed in the root's namespace.
      if (tag.uri === SVG_NS) attrs.unshift(`xmlns="${SVG_NS}"`);
      sawRoot = true;
    }
    out.push(`<${tag.local}${attrs.length ? ' ' + attrs.join(' ') : ''}`);
    open.push({ kept: true, name: tag.local, pending: true });
    elements++;
  });
  parser.on('closetag', () => {
    const el = open.pop()!;
    if (!el.kept) { dropDepth--; return; }
    if (el.pending) out.push('/>');
    else out.push(`</${el.name}>`);
  });
  const onText = (t: string): void => {
    if (dropDepth > 0 || open.length === 0) return;
    closePending();
    out.push(escapeText(open[open.length - 1]!.name === 'style' ? safeCss(t) : t));
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  // Comments, processing instructions and the XML declaration are not carried over.
  try {
    parser.write(text).close();
  } catch (e) {
    if (e instanceof AppError) throw e;
    throw invalid(String((e as Error).message).split('\n')[0]!.slice(0, 200));
  }
  if (!sawRoot) throw invalid('no <svg> element');
  if (usesXlink) out[0] = out[0]!.replace(/^<svg/, `<svg xmlns:xlink="${XLINK_NS}"`);
  return { svg: out.join(''), elements };
}
