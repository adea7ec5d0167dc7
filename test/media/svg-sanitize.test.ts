/**
 * The SVG sanitiser: an XML parser and allow-lists by namespace and local name.
 * Each bypass below passed through the former regex sanitiser into SVG output.
 */
import { describe, expect, test } from 'vitest';
import sharp from 'sharp';
import { parsePlan } from '../../src/media/plan.js';
import { render } from '../../src/media/render.js';
import { sanitizeSvg } from '../../src/media/pipeline/svg-sanitize.js';
import { MAX_SVG_DEPTH } from '../../src/media/limits.js';
import * as fx from './fixtures.js';

const SVG = 'xmlns="http://www.w3.org/2000/svg"';
const XLINK = 'xmlns:xlink="http://www.w3.org/1999/xlink"';
const ctx = { fileId: 'test-file', accept: undefined, scratchDir: fx.DIR, loadOverlay: async () => null };

/** Nothing executable or external is left in the output. */
function expectInert(out: string): void {
  expect(out).not.toMatch(/script|alert|javascript:|foreignObject|onload|onclick|iframe|http:\/\/127|file:/i);
}

describe('bypasses of the regex sanitiser', () => {
  test('<h:script> with the XHTML namespace is removed', () => {
    const out = sanitizeSvg(`<svg ${SVG} xmlns:h="http://www.w3.org/1999/xhtml" width="4" height="4"><h:script>alert(1)</h:script><rect width="4" height="4"/></svg>`);
    expectInert(out);
    expect(out).toBe(`<svg ${SVG} width="4" height="4"><rect width="4" height="4"/></svg>`);
  });

  test('<svg:script> under an SVG prefix is removed', () => {
    const out = sanitizeSvg('<svg:svg xmlns:svg="http://www.w3.org/2000/svg"><svg:script>alert(1)</svg:script><svg:circle r="2"/></svg:svg>');
    expectInert(out);
    expect(out).toBe(`<svg ${SVG}><circle r="2"/></svg>`);
  });

  test('SMIL <animate>/<set> rewriting href to javascript: are removed', () => {
    const out = sanitizeSvg(`<svg ${SVG} ${XLINK}><a><animate attributeName="href" values="javascript:alert(1)"/>`
      + '<set attributeName="xlink:href" to="javascript:alert(2)"/><animate attributeName="onclick" to="alert(3)"/><text>go</text></a>'
      + '<rect width="1" height="1"><animate attributeName="width" from="1" to="5" dur="1s"/></rect></svg>');
    expectInert(out);
    // An animation of an ordinary attribute stays.
    expect(out).toContain('<animate attributeName="width" from="1" to="5" dur="1s"/>');
  });

  test('nested tags that one regex pass would reassemble are not well-formed XML: refused', () => {
    expect(() => sanitizeSvg('<svg><scr<script></script>ipt>alert(1)</script></svg>')).toThrow(expect.objectContaining({ status: 400 }));
  });

  test('javascript: links, event handlers in any namespace, xml:base and external references are dropped', () => {
    const out = sanitizeSvg(`<svg ${SVG} ${XLINK} xmlns:e="urn:evil"><a xlink:href="javascript:alert(1)" href=" JaVa&#x09;Script:alert(2)"><text>x</text></a>`
      + '<rect e:onclick="alert(3)" ONLOAD="alert(4)" onload="alert(5)" xml:base="http://127.0.0.1:1/" style="fill:url(http://127.0.0.1:1/p#x)"/>'
      + '<image href="file:///etc/passwd" width="1" height="1"/><use xlink:href="http://127.0.0.1:1/x.svg#a"/>'
      + '<foreignObject><iframe xmlns="http://www.w3.org/1999/xhtml" src="http://127.0.0.1:1/"/></foreignObject>'
      + '<style>@import url(http://127.0.0.1:1/a.css); rect { fill: url(http://127.0.0.1:1/b) }</style></svg>');
    expectInert(out);
    expect(out).toContain('<rect style="fill:none"/>');
    expect(out).toContain('<image width="1" height="1"/>');
  });
});

describe('what is kept', () => {
  test('local references, inline raster data and ordinary SVG survive unchanged in meaning', () => {
    const png = 'data:image/png;base64,iVBORw0KGgo=';
    const out = sanitizeSvg(`<?xml version="1.0"?><!-- note --><svg ${SVG} ${XLINK} viewBox="0 0 10 10"><defs><linearGradient id="g"><stop offset="0" stop-color="red"/></linearGradient></defs>`
      + `<rect fill="url(#g)" width="10" height="10"/><use xlink:href="#g"/><image href="${png}"/><text xml:space="preserve">a &amp; b &lt; c</text></svg>`);
    expect(out).toBe(`<svg xmlns:xlink="http://www.w3.org/1999/xlink" ${SVG} viewBox="0 0 10 10"><defs><linearGradient id="g"><stop offset="0" stop-color="red"/></linearGradient></defs>`
      + `<rect fill="url(#g)" width="10" height="10"/><use xlink:href="#g"/><image href="${png}"/><text xml:space="preserve">a &amp; b &lt; c</text></svg>`);
  });

  test('entity declarations are refused, a plain DOCTYPE is dropped, a non-SVG root is refused', () => {
    expect(() => sanitizeSvg('<!DOCTYPE svg [<!ENTITY a "aaaa">]><svg>&a;</svg>')).toThrow(/entity/);
    expect(sanitizeSvg('<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd"><svg/>')).toBe('<svg/>');
    expect(() => sanitizeSvg('<html><svg/></html>')).toThrow(/no <svg> element/);
    expect(() => sanitizeSvg('<rect><svg/></rect>')).toThrow(/root element is not <svg>/);
  });

  test('nesting is bounded: 128 levels pass, deeper is refused before the rest is parsed', () => {
    // Namespace resolution walks up the open elements: 20,000 nested groups took 2.8 s unbounded.
    const nested = (depth: number) => `<svg ${SVG}>${'<g>'.repeat(depth - 1)}${'</g>'.repeat(depth - 1)}</svg>`;
    expect(sanitizeSvg(nested(MAX_SVG_DEPTH))).toBe(nested(MAX_SVG_DEPTH).replace(/<g><\/g>/, '<g/>'));
    expect(() => sanitizeSvg(nested(MAX_SVG_DEPTH + 1))).toThrow(/nested deeper than 128 levels/);
    expect(() => sanitizeSvg(nested(20_000))).toThrow(/nested deeper/);
  });

  test('a hostile SVG rasterises and is served as SVG without its payload', async () => {
    const p = fx.svg('bypass.svg', `<svg ${SVG} xmlns:h="http://www.w3.org/1999/xhtml" ${XLINK} width="40" height="40">`
      + '<h:script>alert(1)</h:script><a><set attributeName="href" to="javascript:alert(1)"/><rect width="40" height="40" fill="#00ff00"/></a></svg>');
    const plan = (url: string) => parsePlan(url.split('/').filter(Boolean));
    const png = await render({ path: p, mime: 'image/svg+xml' }, plan('-/rasterize/-/format/png/'), ctx);
    const { data } = await sharp(png.body).raw().toBuffer({ resolveWithObject: true });
    expect([...data.subarray(0, 3)]).toEqual([0, 255, 0]);
    const served = (await render({ path: p, mime: 'image/svg+xml' }, plan('-/resize/20x/'), ctx)).body.toString();
    expectInert(served);
    expect(served).toMatch(/<svg [^>]*width="20"/);
  });
});
