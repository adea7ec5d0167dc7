/**
 * Pixel steps of large images go through scratch files and a worker thread, never through a
 * main-thread buffer (src/media/pipeline/state.ts `mapPixels`, pixel-file.ts, scratch.ts): colour
 * maps, blurs, and the whole-image readers `blur_region` (region-blur.ts) and `trim` (trim-step.ts);
 * large overlays likewise (state.ts `drawOver`), and text is composited by libvips from its SVG.
 * Checked here: the bytes are those of the inline route, the main thread holds no buffer of the
 * image's size, and no scratch file outlives its render, whatever the outcome.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import sharp from 'sharp';
import { parsePlan } from '../../src/media/plan.js';
import { startRender, type RenderContext, type RenderResult } from '../../src/media/render.js';
import { closeDecodePool } from '../../src/media/pipeline/decode-pool.js';
import { INLINE_PIXEL_MAP_PIXELS } from '../../src/media/limits.js';
import * as fx from './fixtures.js';

afterAll(() => closeDecodePool());

const plan = (url: string) => parsePlan(url.split('/').filter(Boolean));

/** A render with its own scratch directory; resolves once its work has ended (scratch disposed). */
async function renderIn(path: string, url: string, opts: { timeoutMs?: number; overlays?: Record<string, string> } = {}): Promise<{ result: RenderResult | Error; scratchDir: string }> {
  const scratchDir = mkdtempSync(join(tmpdir(), 'stowage-scratch-'));
  const overlays = opts.overlays ?? {};
  const loadOverlay: RenderContext['loadOverlay'] = async (uuid) => (overlays[uuid] ? { path: overlays[uuid]!, mime: 'image/png' } : null);
  const ctx: RenderContext = { fileId: 'scratch', accept: undefined, scratchDir, loadOverlay, timeoutMs: opts.timeoutMs ?? 120_000 };
  const run = startRender({ path, mime: 'image/png' }, plan(url), ctx);
  const result = await run.answer.catch((e: Error) => e);
  await run.ended;
  return { result, scratchDir };
}

/**
 * Pixels with distinct values everywhere: channel values vary with x, y and their product. With a
 * `frame`, a border that wide is a single colour (every channel 255), for `trim` to cut.
 */
function busy(w: number, h: number, channels: 1 | 2 | 3 | 4, frame = 0): Buffer {
  const data = Buffer.alloc(w * h * channels);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const o = (y * w + x) * channels;
      const border = x < frame || y < frame || x >= w - frame || y >= h - frame;
      for (let c = 0; c < channels; c++) data[o + c] = border ? 255 : (x * (3 + c) + y * (5 + 2 * c) + ((x * y) >> 4)) & 255;
    }
  }
  return data;
}

/** The same picture as a large PNG (worker route) and its top-left 1000x1000 (inline route). */
async function pair(name: string, channels: 1 | 2 | 3 | 4, sixteen = false, frame = 0): Promise<{ large: string; small: string }> {
  const w = 1200, h = 1000;
  const raw = { width: w, height: h, channels };
  let img = sharp(busy(w, h, channels, frame), { raw });
  if (sixteen) {
    // Spread each 8-bit value over 16 bits, so the 16-bit file has the same picture.
    const wide = new Uint16Array(busy(w, h, channels, frame)).map((v) => v * 257 + ((v * 7) & 255));
    img = sharp(wide, { raw }).toColourspace('rgb16');
  }
  const png = await img.png().toBuffer();
  const cut = sharp(png).extract({ left: 0, top: 0, width: 1000, height: 1000 });
  // sharp writes 8 bits unless told: the small copy must keep the large one's 16.
  const small = await (sixteen ? cut.toColourspace('rgb16') : cut).png().toBuffer();
  expect((await sharp(small).metadata()).depth).toBe(sixteen ? 'ushort' : 'uchar');
  return { large: fx.file(`${name}-large.png`, png), small: fx.file(`${name}-small.png`, small) };
}

/** The top-left `side` x `side` of a render's answer, minus a margin at the cut (blur reaches over it). */
async function corner(r: RenderResult, side: number): Promise<Buffer> {
  return sharp(r.body).extract({ left: 0, top: 0, width: side, height: side }).raw().toBuffer();
}

describe('pixel steps of a large image (scratch files, worker thread)', () => {
  test('sizes on either side of the inline limit', () => {
    expect(1200 * 1000).toBeGreaterThan(INLINE_PIXEL_MAP_PIXELS);
    expect(1000 * 1000).toBeLessThanOrEqual(INLINE_PIXEL_MAP_PIXELS);
  });

  const inputs = [['rgb', 3], ['rgba', 4], ['grey', 1], ['grey-alpha', 2], ['rgb16', 3, true]] as const;
  const urls = [
    // One map; two in a row (the second reads the first's scratch file); a map after a pending
    // libvips operation (the pipeline is written to a scratch file first); greyscale widened.
    '-/warmth/30/',
    '-/filter/carris/-/saturation/40/-/gamma/150/',
    '-/invert/-/vibrance/60/',
    '-/grayscale/-/contrast/30/',
    // A blur, and a blur with an amount (unsharp mask): the blurred copy is made in the worker too.
    '-/blur/20/',
    '-/blur/20/80/-/exposure/50/',
  ];
  for (const [name, channels, sixteen] of inputs) {
    test(`${name}: the same bytes as the inline route`, async () => {
      const { large, small } = await pair(name, channels, sixteen);
      for (const url of urls) {
        const full = `${url}-/format/png/`;
        const [a, b] = await Promise.all([renderIn(large, full), renderIn(small, full)]);
        if (a.result instanceof Error) throw a.result;
        if (b.result instanceof Error) throw b.result;
        expect([a.result.width, a.result.height]).toEqual([1200, 1000]);
        // Blurs spread over the cut of the small copy: compare away from it.
        const side = url.includes('blur') ? 960 : 1000;
        expect((await corner(a.result, side)).equals(await corner(b.result, side)), `${name} ${url}`).toBe(true);
      }
    }, 120_000);
  }
});

describe('whole-image readers of a large image: blur_region and trim (scratch files, worker thread)', () => {
  const inputs = [['rgb', 3], ['rgba', 4], ['grey', 1], ['grey-alpha', 2], ['rgb16', 3, true]] as const;
  // A 50 px single-colour frame: the large copy trims to 1100x900, its top-left 1000x1000 to 950x900.
  const urls = [
    ['-/blur_region/300x300/100,100/50/', [1200, 1000], 1000],
    // Two boxes (the stackable op twice), one of them wide enough for the downscaled blur.
    ['-/blur_region/200x400/500,50/10/-/blur_region/400x300/50,600/400/', [1200, 1000], 1000],
    ['-/trim/', [1100, 900], 900],
    // Padding after the trim; a trim after a pending libvips operation and a map.
    ['-/trim/10/20/', [1140, 940], 920],
    ['-/flip/-/flip/-/warmth/30/-/trim/-/blur_region/200x200/10,10/30/', [1100, 900], 900],
  ] as const;
  for (const [name, channels, sixteen] of inputs) {
    test(`${name}: the same bytes as the inline route`, async () => {
      const { large, small } = await pair(`framed-${name}`, channels, sixteen, 50);
      for (const [url, size, side] of urls) {
        const full = `${url}-/format/png/`;
        const [a, b] = await Promise.all([renderIn(large, full), renderIn(small, full)]);
        if (a.result instanceof Error) throw a.result;
        if (b.result instanceof Error) throw b.result;
        expect([a.result.width, a.result.height], `${name} ${url}`).toEqual(size);
        expect((await corner(a.result, side)).equals(await corner(b.result, side)), `${name} ${url}`).toBe(true);
        expect(readdirSync(a.scratchDir)).toEqual([]);
      }
    }, 120_000);
  }
});

describe('overlays and text over a large image (scratch files, worker thread; libvips)', () => {
  const uuid = '3addab78-6368-4c55-ac08-22412b6a2a4c';
  // Full-size overlays at 0,0: the large copy draws 1200x1000 (worker route), its top-left
  // 1000x1000 draws 1 Mpx (inline route), the same pixels where both are.
  const urls = [
    '-/overlay/self/',
    '-/overlay/self/100px100p/0,0/50p/',
    `-/overlay/${uuid}/1100x1000/0,0/60p/`,
    `-/warmth/20/-/overlay/${uuid}/1100x1000/0,0/-/overlay/self/100px100p/0,0/30p/`,
    '-/font/bold/120/ff000080/-/text_box/fill/0000ff40/8/-/text/1100x1000/0,0/Large text~nover the image/',
  ];
  for (const [name, channels, sixteen] of [['rgb', 3], ['rgba', 4], ['grey', 1], ['rgb16', 3, true]] as const) {
    test(`${name}: the same bytes as the inline route`, async () => {
      const { large, small } = await pair(`over-${name}`, channels, sixteen);
      const over = fx.file('over-rgba-1100x1000.png', await sharp(busy(1100, 1000, 4), { raw: { width: 1100, height: 1000, channels: 4 } }).png().toBuffer());
      for (const url of urls) {
        const full = `${url}-/format/png/`;
        const overlays = { [uuid]: over };
        const [a, b] = await Promise.all([renderIn(large, full, { overlays }), renderIn(small, full, { overlays })]);
        if (a.result instanceof Error) throw a.result;
        if (b.result instanceof Error) throw b.result;
        expect([a.result.width, a.result.height]).toEqual([1200, 1000]);
        expect((await corner(a.result, 1000)).equals(await corner(b.result, 1000)), `${name} ${url}`).toBe(true);
        expect(readdirSync(a.scratchDir)).toEqual([]);
      }
    }, 120_000);
  }
});

/**
 * Peak growth of the main thread's buffers while `work` runs, sampled every ms. `external`, not
 * `arrayBuffers`: sharp's output buffers wrap memory libvips allocated, which V8 counts as external
 * memory of this isolate but not as ArrayBuffer memory (a 36 MB `raw().toBuffer()` adds 36 MB to
 * the first, nothing to the second). `external` includes `arrayBuffers`; a worker's are its own.
 */
async function peakBuffers(work: () => Promise<void>): Promise<number> {
  const base = process.memoryUsage().external;
  let peak = base;
  const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage().external); }, 1);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return peak - base;
}

describe('the main thread and the scratch area', () => {
  test('the main thread never holds a buffer of the image size', async () => {
    // 36 MB of pixels; the main thread's buffers (sharp's output buffers among them) sampled
    // all along. Before the scratch files, a copy for the worker and the moved-back answer were there.
    const path = fx.file('busy-4000x3000.png', await sharp(busy(4000, 3000, 3), { raw: { width: 4000, height: 3000, channels: 3 } }).png({ compressionLevel: 1 }).toBuffer());
    await renderIn(path, '-/warmth/7/-/resize/64x/');
    const peak = await peakBuffers(async () => {
      for (let i = 0; i < 3; i++) {
        const { result } = await renderIn(path, '-/warmth/7/-/saturation/10/-/blur/20/50/-/resize/64x/');
        expect(result).not.toBeInstanceOf(Error);
      }
    });
    expect(peak).toBeLessThan(4000 * 3000 * 3 / 4);
  }, 120_000);

  const readers = [
    '-/blur_region/2000x1500/500,500/50/-/resize/64x/', '-/trim/-/resize/64x/', '-/trim/20/10/-/blur_region/50px50p/0,0/300/-/resize/64x/',
    '-/overlay/self/100px100p/0,0/50p/-/resize/64x/', '-/text/100px100p/0,0/hello/-/resize/64x/',
  ];
  for (const url of readers) {
    test(`${url}: the main thread never holds a buffer of the image size`, async () => {
      // 36 MB of pixels in a 100 px frame. Before, blur_region and trim read them all into a
      // sharp output buffer on the main thread (and trim its trimmed copy too); a full-size
      // overlay or text box was read out there as RGBA (48 MB).
      const path = fx.file('framed-4000x3000.png', await sharp(busy(4000, 3000, 3, 100), { raw: { width: 4000, height: 3000, channels: 3 } }).png({ compressionLevel: 1 }).toBuffer());
      await renderIn(path, url);
      const peak = await peakBuffers(async () => {
        for (let i = 0; i < 3; i++) {
          const { result, scratchDir } = await renderIn(path, url);
          expect(result).not.toBeInstanceOf(Error);
          expect(readdirSync(scratchDir)).toEqual([]);
        }
      });
      console.log(`[scratch] ${url}: main-thread buffers peaked ${(peak / 1e6).toFixed(1)} MB above the start`);
      expect(peak).toBeLessThan(4000 * 3000 * 3 / 4);
    }, 120_000);
  }

  test('no scratch file outlives its render: answered, refused after the maps, or past its deadline', async () => {
    const path = fx.file('busy-3000x2000.png', await sharp(busy(3000, 2000, 3), { raw: { width: 3000, height: 2000, channels: 3 } }).png({ compressionLevel: 1 }).toBuffer());
    const done = await renderIn(path, '-/warmth/30/-/invert/-/saturation/20/-/resize/100x/');
    expect(done.result).not.toBeInstanceOf(Error);
    expect(readdirSync(done.scratchDir)).toEqual([]);
    // Refused by the output cap (3000x3000) once the transforms have made their scratch files.
    const refused = await renderIn(path, '-/warmth/30/-/saturation/20/-/resize/3500x/');
    expect(refused.result).toMatchObject({ status: 400, code: 'OutputTooLarge' });
    expect(readdirSync(refused.scratchDir)).toEqual([]);
    // A deadline that passes during the maps: the answer is a 400 at once, the files go when the work stops.
    const late = await renderIn(path, '-/warmth/30/-/saturation/20/-/vibrance/40/-/blur/200/50/-/resize/100x/', { timeoutMs: 400 });
    expect(late.result).toMatchObject({ status: 400, code: 'ProcessingTimeout' });
    expect(readdirSync(late.scratchDir)).toEqual([]);
    // The same with blur_region and trim, which go through the scratch files as well.
    const trimmed = await renderIn(path, '-/trim/-/blur_region/1000x1000/10,10/50/-/resize/100x/');
    expect(trimmed.result).not.toBeInstanceOf(Error);
    expect(readdirSync(trimmed.scratchDir)).toEqual([]);
    const refusedRegion = await renderIn(path, '-/blur_region/1000x1000/10,10/50/-/trim/-/resize/3500x/');
    expect(refusedRegion.result).toMatchObject({ status: 400, code: 'OutputTooLarge' });
    expect(readdirSync(refusedRegion.scratchDir)).toEqual([]);
    const lateRegion = await renderIn(path, '-/blur_region/3000x2000/0,0/200/-/trim/-/blur_region/2000x1500/10,10/400/-/trim/-/blur_region/3000x2000/0,0/100/-/resize/100x/', { timeoutMs: 400 });
    expect(lateRegion.result).toMatchObject({ status: 400, code: 'ProcessingTimeout' });
    expect(readdirSync(lateRegion.scratchDir)).toEqual([]);
    // And a large overlay, whose file lives until the pipeline that composites it has run.
    const overlaid = await renderIn(path, '-/overlay/self/100px100p/0,0/50p/-/overlay/self/100px100p/0,0/40p/-/resize/100x/');
    expect(overlaid.result).not.toBeInstanceOf(Error);
    expect(readdirSync(overlaid.scratchDir)).toEqual([]);
    const refusedOverlay = await renderIn(path, '-/overlay/self/100px100p/0,0/50p/-/resize/3500x/');
    expect(refusedOverlay.result).toMatchObject({ status: 400, code: 'OutputTooLarge' });
    expect(readdirSync(refusedOverlay.scratchDir)).toEqual([]);
    const lateOverlay = await renderIn(path, '-/overlay/self/100px100p/0,0/50p/-/blur/200/50/-/overlay/self/100px100p/0,0/50p/-/trim/-/overlay/self/100px100p/0,0/50p/-/resize/100x/', { timeoutMs: 400 });
    expect(lateOverlay.result).toMatchObject({ status: 400, code: 'ProcessingTimeout' });
    expect(readdirSync(lateOverlay.scratchDir)).toEqual([]);
  }, 120_000);
});
