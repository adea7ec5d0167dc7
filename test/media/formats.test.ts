import { describe, expect, test } from 'vitest';
import { join } from 'node:path';
import sharp from 'sharp';
import { parsePlan } from '../../src/media/plan.js';
import { imageJson, render, type RenderResult } from '../../src/media/render.js';
import * as fx from './fixtures.js';

const ctx = { fileId: 'test-file', accept: undefined, scratchDir: fx.DIR, loadOverlay: async () => null };
const run = (path: string, mime: string, url = '-/preview/'): Promise<RenderResult> =>
  render({ path, mime }, parsePlan(url.split('/').filter(Boolean)), ctx);

async function centre(buf: Buffer): Promise<number[]> {
  const { data, info } = await sharp(buf).toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  const o = (Math.floor(info.height / 2) * info.width + Math.floor(info.width / 2)) * info.channels;
  return [...data.subarray(o, o + 3)];
}
const near = (a: number[], b: number[], tol = 16): boolean => b.every((v, i) => Math.abs(a[i]! - v) <= tol);
const C = { r: 200, g: 30, b: 40 };

describe('every input format decodes for real', () => {
  test.each([
    ['jpeg', 'image/jpeg'], ['png', 'image/png'], ['webp', 'image/webp'], ['avif', 'image/avif'],
    ['tiff', 'image/tiff'], ['gif', 'image/gif'],
  ] as const)('%s', async (format, mime) => {
    const r = await run(await fx.solid(32, 24, C, format), mime);
    expect([r.width, r.height]).toEqual([32, 24]);
    expect(near(await centre(r.body), [200, 30, 40], format === 'gif' ? 40 : 16)).toBe(true);
  });

  test.each([
    ['bmp', 'image/bmp', () => fx.bmp(32, 24, C)],
    ['pcx', 'image/x-pcx', () => fx.pcx(32, 24, C)],
    ['tga', 'image/x-tga', () => fx.tga(32, 24, C)],
    ['heic', 'image/heic', () => join(fx.FIXTURES, 'sample.heic')],
  ])('%s', async (_n, mime, make) => {
    const r = await run(make(), mime, '-/resize/16x/');
    expect([r.width, r.height, r.format]).toEqual([16, 12, 'jpeg']);
    expect(near(await centre(r.body), [200, 30, 40], 20)).toBe(true);
  });

  test('svg rasterizes', async () => {
    const p = fx.svg('r.svg', '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" fill="#c81e28"/></svg>');
    const r = await run(p, 'image/svg+xml', '-/rasterize/-/format/png/');
    expect([r.width, r.height, r.format]).toEqual([40, 20, 'png']);
    expect(near(await centre(r.body), [200, 30, 40])).toBe(true);
  });

  test('animated GIF is processed as its first frame', async () => {
    const r = await run(await fx.animatedGif(), 'image/gif', '-/format/png/');
    expect([r.width, r.height]).toEqual([40, 30]);
    expect(near(await centre(r.body), [255, 0, 0])).toBe(true);
  });

  test('a non-image is refused', async () => {
    await expect(run(fx.file('a.txt', 'hello world'), 'text/plain')).rejects.toMatchObject({ status: 400, message: /not images/ });
    await expect(run(fx.file('fake.png', 'not a png at all'), 'image/png')).rejects.toMatchObject({ status: 400 });
  });
});

describe('SVG served as SVG', () => {
  const text = '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100" viewBox="0 0 200 100"><rect width="200" height="100" fill="red"/></svg>';
  test('resize, crop, scale_crop change attributes; the rest leaves the body', async () => {
    const p = fx.svg('a.svg', text);
    const r = await run(p, 'image/svg+xml', '-/resize/100x/-/grayscale/');
    expect([r.contentType, r.width, r.height]).toEqual(['image/svg+xml', 100, 50]);
    expect(r.body.toString()).toMatch(/<svg [^>]*width="100" height="50"/);
    expect(r.body.toString()).toContain('fill="red"');
    const c = await run(p, 'image/svg+xml', '-/crop/100x50/100p,100p/');
    expect(c.body.toString()).toMatch(/viewBox="100 50 100 50"/);
    const sc = await run(p, 'image/svg+xml', '-/scale_crop/50x50/center/');
    expect([sc.width, sc.height]).toEqual([50, 50]);
    expect(sc.body.toString()).toMatch(/viewBox="50 0 100 100"/);
  });
});

describe('gif2video', () => {
  test.each(['mp4', 'webm'] as const)('real %s through ffmpeg with companions', async (container) => {
    const r = await render({ path: await fx.animatedGif(), mime: 'image/gif' },
      parsePlan(['gif2video', '-', 'format', container, '-', 'quality', 'lighter', '-', 'resize', '21x']), ctx);
    expect(r.contentType).toBe(`video/${container}`);
    expect([r.width, r.height]).toEqual([20, 16]);
    if (container === 'mp4') expect(r.body.toString('latin1', 4, 8)).toBe('ftyp');
    else expect(r.body.readUInt32BE(0)).toBe(0x1a45dfa3);
  }, 30_000);

  test('without ffmpeg on this node: 501 naming what is missing, not a 500', async () => {
    const path = process.env['PATH'];
    process.env['PATH'] = '/nonexistent';
    try {
      await expect(render({ path: await fx.animatedGif(), mime: 'image/gif' }, parsePlan(['gif2video']), ctx))
        .rejects.toMatchObject({ status: 501, message: 'gif2video is not available on this server: ffmpeg is not installed.' });
    } finally {
      process.env['PATH'] = path;
    }
  });

  test('non-GIF input is refused', async () => {
    await expect(render({ path: await fx.solid(10, 10, C), mime: 'image/png' }, parsePlan(['gif2video']), ctx))
      .rejects.toMatchObject({ status: 400, message: /not a GIF/ });
  });
});

describe('json info', () => {
  test('fields of the public shape', async () => {
    const j = await imageJson({ path: await fx.exifJpeg(), mime: 'image/jpeg' });
    expect(j).toMatchObject({ width: 60, height: 40, format: 'JPEG', orientation: 6, sequence: false, color_mode: 'RGB', datetime_original: '2021-05-06T07:08:09' });
    expect(j.geo_location).toMatchObject({ latitude: expect.closeTo(48.858, 2), longitude: expect.closeTo(2.35, 2) });
    const g = await imageJson({ path: await fx.animatedGif(), mime: 'image/gif' });
    expect(g).toMatchObject({ format: 'GIF', sequence: true, width: 40, height: 30 });
  });
});
