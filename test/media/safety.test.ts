import { describe, expect, test } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { parsePlan } from '../../src/media/plan.js';
import { render } from '../../src/media/render.js';
import { MAX_INPUT_PIXELS, checkInputHeader } from '../../src/media/limits.js';
import { sanitizeSvg } from '../../src/media/pipeline/svg-sanitize.js';
import * as fx from './fixtures.js';

const ctx = { fileId: 'test-file', accept: undefined, loadOverlay: async () => null };
const run = (path: string, mime: string, url = '-/preview/') =>
  render({ path, mime }, parsePlan(url.split('/').filter(Boolean)), ctx);

describe('decompression bombs are refused from the header', () => {
  test('header check', () => {
    expect(MAX_INPUT_PIXELS).toBe(75_000_000);
    expect(() => checkInputHeader({ width: 10000, height: 7500 })).not.toThrow();
    expect(() => checkInputHeader({ width: 10000, height: 7501 })).toThrow(/75 Mpx/);
  });

  test('PNG declaring 12000x12000 (compresses to a few KB) gets 400 before decode', async () => {
    const bomb = await sharp({ create: { width: 12000, height: 12000, channels: 3, background: fx.RED } }).png({ compressionLevel: 9 }).toBuffer();
    expect(bomb.length).toBeLessThan(1_000_000);
    const p = fx.file('bomb.png', bomb);
    const before = process.memoryUsage().rss;
    await expect(run(p, 'image/png')).rejects.toMatchObject({ status: 400, code: 'ImageTooLarge' });
    expect(process.memoryUsage().rss - before).toBeLessThan(100_000_000);
  }, 30_000);

  test('BMP header bomb', async () => {
    await expect(run(fx.bmpBomb(), 'image/bmp')).rejects.toMatchObject({ status: 400, code: 'ImageTooLarge' });
  });

  test('truncated or corrupt input is a 400, not a crash', async () => {
    const good = await sharp({ create: { width: 300, height: 300, channels: 3, background: fx.RED } }).jpeg().toBuffer();
    await expect(run(fx.file('trunc.jpg', good.subarray(0, good.length / 2)), 'image/jpeg')).rejects.toMatchObject({ status: 400 });
    const pcx = Buffer.from(require_pcx());
    await expect(run(fx.file('trunc.pcx', pcx.subarray(0, 140)), 'image/x-pcx')).rejects.toMatchObject({ status: 400 });
    await expect(run(fx.file('bad.tga', Buffer.from([0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 10, 0, 24, 0])), 'image/x-tga')).rejects.toMatchObject({ status: 400 });
  });
});

function require_pcx(): Buffer {
  return readFileSync(fx.pcx(20, 20, fx.RED));
}

describe('hostile SVG', () => {
  const secret = join(fx.DIR, 'secret.png');

  test('external and local file references are stripped before rendering', async () => {
    writeFileSync(secret, await sharp({ create: { width: 50, height: 50, channels: 3, background: fx.RED } }).png().toBuffer());
    const text = `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="50" height="50">
      <rect width="50" height="50" fill="#fff"/>
      <image href="secret.png" width="50" height="50"/>
      <image xlink:href="file://${secret}" width="50" height="50"/>
      <image href="http://127.0.0.1:1/x.png" width="50" height="50"/>
      <rect width="50" height="50" style="fill:url(http://127.0.0.1:1/p.svg#x)" onload="alert(1)"/>
      <script>alert(1)</script><foreignObject><iframe src="http://127.0.0.1:1/"/></foreignObject></svg>`;
    const p = fx.svg('hostile.svg', text);
    const r = await run(p, 'image/svg+xml', '-/rasterize/-/format/png/');
    const { data } = await sharp(r.body).raw().toBuffer({ resolveWithObject: true });
    expect([data[0], data[1], data[2]]).toEqual([255, 255, 255]);
    const served = (await run(p, 'image/svg+xml', '-/resize/25x/')).body.toString();
    for (const bad of ['secret.png', 'file://', 'http://127.0.0.1', '<script', 'onload', 'foreignObject']) expect(served).not.toContain(bad);
  });

  test('entity declarations are refused; local fragments survive', () => {
    expect(() => sanitizeSvg('<!DOCTYPE svg [<!ENTITY a "aaaa">]><svg>&a;</svg>')).toThrow(/entity/);
    expect(sanitizeSvg('<svg><use href="#a"/><rect fill="url(#g)"/></svg>')).toBe('<svg><use href="#a"/><rect fill="url(#g)"/></svg>');
  });

  test('huge declared dimensions are refused', async () => {
    const p = fx.svg('huge.svg', '<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000"><rect width="10" height="10"/></svg>');
    await expect(run(p, 'image/svg+xml', '-/rasterize/')).rejects.toMatchObject({ status: 400, code: 'ImageTooLarge' });
  });
});
