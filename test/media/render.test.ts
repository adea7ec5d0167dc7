import { describe, expect, test } from 'vitest';
import sharp from 'sharp';
import { parsePlan } from '../../src/media/plan.js';
import { imageJson, render, type RenderContext, type RenderResult } from '../../src/media/render.js';
import * as fx from './fixtures.js';

const ctx = (accept?: string, overlays: Record<string, string> = {}): RenderContext => ({
  fileId: 'test-file',
  accept,
  scratchDir: fx.DIR,
  loadOverlay: async (uuid) => (overlays[uuid] ? { path: overlays[uuid]!, mime: 'image/png' } : null),
});

async function run(path: string, url: string, c: RenderContext = ctx(), mime = 'image/png'): Promise<RenderResult> {
  return render({ path, mime }, parsePlan(url.split('/').filter(Boolean)), c);
}

async function pixel(buf: Buffer, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(buf).ensureAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  const o = (y * info.width + x) * info.channels;
  return [...data.subarray(o, o + 4)];
}

const near = (a: number[], b: number[], tol = 12): boolean => b.every((v, i) => Math.abs(a[i]! - v) <= tol);

describe('geometry', () => {
  test('resize one dimension keeps ratio; format and dimensions are real', async () => {
    const r = await run(await fx.quadrants(200, 100), '-/resize/100x/-/format/webp/');
    expect([r.width, r.height, r.format, r.contentType]).toEqual([100, 50, 'webp', 'image/webp']);
    const m = await sharp(r.body).metadata();
    expect([m.width, m.height, m.format]).toEqual([100, 50, 'webp']);
  });

  test('resize two dimensions stretches; stretch/off does not enlarge; fill pads', async () => {
    const p = await fx.quadrants(200, 100);
    expect((await run(p, '-/resize/50x50/')).width).toBe(50);
    const off = await run(p, '-/stretch/off/-/resize/400x/');
    expect([off.width, off.height]).toEqual([200, 100]);
    const fill = await run(p, '-/stretch/fill/-/setfill/00ff00/-/resize/400x200/-/format/png/');
    expect([fill.width, fill.height]).toEqual([400, 200]);
    expect(near(await pixel(fill.body, 5, 5), [0, 255, 0, 255])).toBe(true);
  });

  test('preview fits and never enlarges; implicit preview caps at 2048', async () => {
    const r = await run(await fx.quadrants(200, 100), '-/preview/50x50/');
    expect([r.width, r.height]).toEqual([50, 25]);
    expect((await run(await fx.quadrants(200, 100), '-/preview/')).width).toBe(200);
    const big = await run(await fx.solid(2500, 1000, fx.RED, 'jpeg'), '-/grayscale/', ctx(), 'image/jpeg');
    expect([big.width, big.height]).toEqual([2048, 819]);
  });

  test('crop with alignment returns the region of a known colour', async () => {
    const p = await fx.quadrants(200, 100);
    const tl = await run(p, '-/crop/100x50/');
    expect(near(await pixel(tl.body, 50, 25), [255, 0, 0, 255])).toBe(true);
    const br = await run(p, '-/crop/100x50/100p,100p/');
    expect(near(await pixel(br.body, 50, 25), [255, 255, 255, 255])).toBe(true);
    const right = await run(p, '-/crop/50x40/right/');
    expect([right.width, right.height]).toEqual([50, 40]);
    const bl = await run(p, '-/crop/100x50/0,50/');
    expect(near(await pixel(bl.body, 10, 10), [0, 0, 255, 255])).toBe(true);
    const ratio = await run(p, '-/crop/1:1/left/');
    expect([ratio.width, ratio.height]).toEqual([100, 100]);
    expect(near(await pixel(ratio.body, 10, 10), [255, 0, 0, 255])).toBe(true);
    const pct = await run(p, '-/crop/50px50p/center/');
    expect([pct.width, pct.height]).toEqual([100, 50]);
  });

  test('crop outside the image is filled with setfill', async () => {
    const r = await run(await fx.quadrants(200, 100), '-/setfill/00ff00/-/crop/100x100/150,50/-/format/png/');
    expect([r.width, r.height]).toEqual([100, 100]);
    expect(near(await pixel(r.body, 10, 10), [255, 255, 255, 255])).toBe(true);
    expect(near(await pixel(r.body, 90, 90), [0, 255, 0, 255])).toBe(true);
  });

  test('scale_crop covers then cuts at the alignment; smart works', async () => {
    const p = await fx.quadrants(200, 100);
    const r = await run(p, '-/scale_crop/50x50/');
    expect([r.width, r.height]).toEqual([50, 50]);
    expect(near(await pixel(r.body, 10, 10), [255, 0, 0, 255])).toBe(true);
    const right = await run(p, '-/scale_crop/50x50/100p,0p/');
    expect(near(await pixel(right.body, 40, 10), [0, 255, 0, 255])).toBe(true);
    const smart = await run(await fx.gradient(), '-/scale_crop/40x40/smart/');
    expect([smart.width, smart.height]).toEqual([40, 40]);
    const sr = await run(await fx.gradient(), '-/smart_resize/60x20/');
    expect([sr.width, sr.height]).toEqual([60, 20]);
  });

  test('trim removes a solid border and pads', async () => {
    const inner = await sharp({ create: { width: 20, height: 10, channels: 3, background: fx.RED } }).png().toBuffer();
    const framed = fx.file('framed.png', await sharp(inner).extend({ top: 15, bottom: 15, left: 15, right: 15, background: fx.WHITE }).png().toBuffer());
    expect([(await run(framed, '-/trim/')).width, (await run(framed, '-/trim/')).height]).toEqual([20, 10]);
    const padded = await run(framed, '-/trim/10/5/');
    expect([padded.width, padded.height]).toEqual([30, 20]);
  });

  test('trim of a single-colour image keeps it whole (libvips answers its size; no error to swallow)', async () => {
    const flat = fx.file('flat.png', await sharp({ create: { width: 30, height: 20, channels: 3, background: fx.RED } }).png().toBuffer());
    const r = await run(flat, '-/trim/-/format/png/');
    expect([r.width, r.height]).toEqual([30, 20]);
    expect(near(await pixel(r.body, 29, 19), [255, 0, 0, 255])).toBe(true);
  });

  test('border_radius makes corners transparent and outputs png with alpha', async () => {
    const r = await run(await fx.solid(100, 100, fx.RED, 'jpeg'), '-/border_radius/50p/', ctx(), 'image/jpeg');
    expect(r.format).toBe('png');
    expect((await pixel(r.body, 1, 1))[3]).toBe(0);
    expect(near(await pixel(r.body, 50, 50), [255, 0, 0, 255])).toBe(true);
    const two = await run(await fx.solid(100, 60, fx.RED), '-/border_radius/20,0/10/-/format/webp/');
    expect(two.format).toBe('webp');
    expect((await pixel(two.body, 0, 0))[3]).toBe(0);
    expect((await pixel(two.body, 99, 0))[3]).toBe(255);
  });

  test('output caps: 3000 default, 5000 with explicit jpeg', async () => {
    const p = await fx.solid(100, 100, fx.RED);
    await expect(run(p, '-/resize/3001x/')).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/3000x3000/) });
    expect((await run(p, '-/resize/3200x10/-/format/jpeg/')).width).toBe(3200);
    await expect(run(p, '-/resize/5001x10/-/format/jpeg/')).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/5000x5000/) });
  });
});

describe('rotation', () => {
  test('rotate/90 swaps dimensions, counterclockwise', async () => {
    const r = await run(await fx.quadrants(200, 100), '-/rotate/90/');
    expect([r.width, r.height]).toEqual([100, 200]);
    // CCW: the top-right (green) quadrant ends up top-left.
    expect(near(await pixel(r.body, 10, 10), [0, 255, 0, 255])).toBe(true);
    const free = await run(await fx.quadrants(200, 100), '-/rotate/45/');
    expect(free.width).toBeGreaterThan(200);
  });

  test('flip and mirror', async () => {
    const p = await fx.quadrants(200, 100);
    expect(near(await pixel((await run(p, '-/flip/')).body, 10, 10), [0, 0, 255, 255])).toBe(true);
    expect(near(await pixel((await run(p, '-/mirror/')).body, 10, 10), [0, 255, 0, 255])).toBe(true);
  });

  test('EXIF orientation is applied unless autorotate/no', async () => {
    const p = await fx.exifJpeg();
    const r = await run(p, '-/preview/', ctx(), 'image/jpeg');
    expect([r.width, r.height]).toEqual([40, 60]);
    const no = await run(p, '-/autorotate/no/-/preview/', ctx(), 'image/jpeg');
    expect([no.width, no.height]).toEqual([60, 40]);
  });
});

describe('compression and metadata', () => {
  test('format/auto follows Accept and sets varyAccept', async () => {
    const p = await fx.quadrants(200, 100, 'jpeg');
    const avif = await run(p, '-/format/auto/', ctx('image/avif,image/webp,*/*'), 'image/jpeg');
    expect([avif.format, avif.varyAccept]).toEqual(['avif', true]);
    expect((await sharp(avif.body).metadata()).format).toBe('heif');
    expect((await run(p, '-/format/auto/', ctx('image/webp,*/*'), 'image/jpeg')).format).toBe('webp');
    expect((await run(p, '-/format/auto/', ctx('image/png'), 'image/jpeg')).format).toBe('jpeg');
    expect((await run(p, '-/format/auto/', ctx('image/webp;q=0'), 'image/jpeg')).format).toBe('jpeg');
  });

  test('preserve keeps png, coerces others', async () => {
    expect((await run(await fx.solid(10, 10, fx.RED), '-/format/preserve/')).format).toBe('png');
    expect((await run(await fx.solid(10, 10, fx.RED, 'webp'), '-/format/preserve/', ctx(), 'image/webp')).format).toBe('jpeg');
  });

  test('quality levels change the size; progressive jpeg', async () => {
    const p = await fx.gradient(300, 200);
    const best = await run(p, '-/format/jpeg/-/quality/best/');
    const lightest = await run(p, '-/format/jpeg/-/quality/lightest/');
    expect(best.body.length).toBeGreaterThan(lightest.body.length);
    const prog = await run(p, '-/format/jpeg/-/progressive/yes/');
    expect((await sharp(prog.body).metadata()).isProgressive).toBe(true);
  });

  test('strip_meta: all removes EXIF, none keeps it, sensitive drops GPS', async () => {
    const p = await fx.exifJpeg();
    const all = await run(p, '-/format/jpeg/-/strip_meta/all/', ctx(), 'image/jpeg');
    expect((await sharp(all.body).metadata()).exif).toBeUndefined();
    const none = await run(p, '-/format/jpeg/-/strip_meta/none/', ctx(), 'image/jpeg');
    const exifNone = (await sharp(none.body).metadata()).exif;
    expect(exifNone?.includes('StowageCam')).toBe(true);
    const sens = await run(p, '-/format/jpeg/-/strip_meta/sensitive/-/grayscale/', ctx(), 'image/jpeg');
    const j = await imageJson({ path: fx.file('sens.jpg', sens.body), mime: 'image/jpeg' });
    expect(j.geo_location).toBeNull();
    expect((await sharp(sens.body).metadata()).exif?.includes('StowageCam')).toBe(true);
  });

  test('-/json/ is a branch of render(): the facts with the file id first, no pixels encoded', async () => {
    const r = await run(await fx.quadrants(200, 100), '-/json/');
    expect(r.contentType).toBe('application/json');
    expect(r.format).toBe('json');
    const body = JSON.parse(r.body.toString('utf8')) as Record<string, unknown>;
    expect(Object.keys(body)[0]).toBe('id');
    expect(body).toMatchObject({ id: 'test-file', width: 200, height: 100, format: 'PNG' });
    expect([r.width, r.height]).toEqual([200, 100]);
  });
});

describe('colours', () => {
  test('grayscale gives equal channels', async () => {
    const r = await run(await fx.quadrants(200, 100), '-/grayscale/-/format/png/');
    const { data, info } = await sharp(r.body).toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
    for (let i = 0; i < data.length; i += info.channels * 97) expect(data[i]).toBe(data[i + 1]);
    for (let i = 0; i < data.length; i += info.channels * 97) expect(data[i + 1]).toBe(data[i + 2]);
  });

  test('invert inverts', async () => {
    const r = await run(await fx.quadrants(200, 100), '-/invert/');
    expect(near(await pixel(r.body, 10, 10), [0, 255, 255, 255])).toBe(true);
    expect(near(await pixel(r.body, 190, 90), [0, 0, 0, 255])).toBe(true);
  });

  test.each([
    ['-/brightness/50/', (a: number[], b: number[]) => a[2]! > b[2]!],
    ['-/brightness/-50/', (a: number[], b: number[]) => a[2]! < b[2]!],
    ['-/exposure/100/', (a: number[], b: number[]) => a[0]! > b[0]!],
    ['-/gamma/200/', (a: number[], b: number[]) => a[2]! > b[2]!],
    ['-/contrast/-100/', (a: number[]) => Math.abs(a[0]! - 128) < 3 && Math.abs(a[1]! - 128) < 3],
    ['-/saturation/-100/', (a: number[]) => Math.abs(a[0]! - a[1]!) < 3],
    ['-/vibrance/100/', (a: number[], b: number[]) => Math.abs(a[0]! - a[1]!) > Math.abs(b[0]! - b[1]!)],
    ['-/warmth/100/', (a: number[], b: number[]) => a[0]! > b[0]! && a[2]! < b[2]!],
    ['-/enhance/', (a: number[]) => a.length === 4],
    ['-/sharp/10/', (a: number[]) => a.length === 4],
  ])('%s changes pixels as documented', async (url, check) => {
    const p = await fx.gradient();
    const base = await pixel((await run(p, '-/format/png/')).body, 50, 30);
    const got = await pixel((await run(p, `${url}-/format/png/`)).body, 50, 30);
    expect(check(got, base)).toBe(true);
  });

  test('every filter is a distinct deterministic recipe; amount 0 is identity', async () => {
    const { FILTERS } = await import('../../src/media/operations/filters.js');
    const p = await fx.gradient(40, 30);
    const seen = new Set<string>();
    for (const name of Object.keys(FILTERS)) {
      const a = await run(p, `-/filter/${name}/-/format/png/`);
      const b = await run(p, `-/filter/${name}/-/format/png/`);
      expect(a.body.equals(b.body)).toBe(true);
      const raw = (await sharp(a.body).raw().toBuffer()).toString('base64');
      expect(seen.has(raw)).toBe(false);
      seen.add(raw);
    }
    expect(seen.size).toBe(40);
    const zero = await run(p, '-/filter/sedis/0/-/format/png/');
    const plain = await run(p, '-/format/png/');
    expect((await sharp(zero.body).raw().toBuffer()).equals(await sharp(plain.body).raw().toBuffer())).toBe(true);
  });

  test('blur smooths; blur with amount sharpens; blur_region only inside', async () => {
    const p = await fx.quadrants(200, 100);
    const edge = async (url: string) => pixel((await run(p, `${url}-/format/png/`)).body, 99, 25);
    const plainEdge = await edge('');
    const blurred = await edge('-/blur/100/');
    expect(blurred[0]! < plainEdge[0]! || blurred[1]! > plainEdge[1]!).toBe(true);
    expect((await run(p, '-/blur/2000/')).width).toBe(200);
    const unsharp = await run(p, '-/blur/20/100/-/format/png/');
    expect(unsharp.width).toBe(200);
    const region = await run(p, '-/blur_region/20x20/90,15/200/-/format/png/');
    expect(near(await pixel(region.body, 10, 10), [255, 0, 0, 255])).toBe(true);
  });
});

describe('overlays', () => {
  test('image overlay by uuid with size, position and opacity', async () => {
    const base = await fx.solid(200, 100, fx.WHITE);
    const over = await fx.solid(50, 50, fx.BLUE);
    const uuid = '3addab78-6368-4c55-ac08-22412b6a2a4c';
    const r = await run(base, `-/overlay/${uuid}/20px20p/100p,100p/100p/-/format/png/`, ctx(undefined, { [uuid]: over }));
    // 20% of 100 px high = 20x20 square in the bottom-right corner.
    expect(near(await pixel(r.body, 190, 90), [0, 0, 255, 255])).toBe(true);
    expect(near(await pixel(r.body, 170, 70), [255, 255, 255, 255])).toBe(true);
    const half = await run(base, `-/overlay/${uuid}/20px20p/center/50p/-/format/png/`, ctx(undefined, { [uuid]: over }));
    expect(near(await pixel(half.body, 100, 50), [128, 128, 255, 255], 3)).toBe(true);
    await expect(run(base, '-/overlay/00000000-0000-0000-0000-000000000000/')).rejects.toMatchObject({ status: 400 });
  });

  test('self overlay and rect', async () => {
    const p = await fx.quadrants(200, 100);
    const self = await run(p, '-/overlay/self/50px50p/0,0/');
    expect(near(await pixel(self.body, 60, 10), [0, 255, 0, 255])).toBe(true);
    const rect = await run(p, '-/rect/000000/10px10p/50p,50p/-/format/png/');
    expect(near(await pixel(rect.body, 100, 50), [0, 0, 0, 255])).toBe(true);
  });

  test('text overlay renders with escaped input', async () => {
    const p = await fx.solid(200, 100, fx.WHITE);
    const plain = await run(p, '-/format/png/');
    const r = await run(p, '-/font/bold/40/ff0000/dejavu/-/text_box/fill/0000ff/2/-/text/80px40p/0,0/<b>&amp;"~s/-/format/png/');
    expect(r.body.equals(plain.body)).toBe(false);
    expect(near(await pixel(r.body, 2, 2), [0, 0, 255, 255])).toBe(true);
    for (const fam of ['dejavumono', 'dejavuserif', 'noto', 'notomono', 'notoserif']) {
      expect((await run(p, `-/font/${fam}/-/text/50px50p/center/Hi/`)).width).toBe(200);
    }
  });
});
