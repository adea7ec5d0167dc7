/**
 * Decoders in worker threads: TGA, PCX, BMP and HEIC decode off the main
 * thread, each task bounded by the render's time left; a decoder stopped at its limit frees its
 * thread and the pool keeps serving.
 */
import { afterAll, describe, expect, test } from 'vitest';
import sharp from 'sharp';
import { parsePlan } from '../../src/media/plan.js';
import { render, type RenderContext } from '../../src/media/render.js';
import { closeDecodePool } from '../../src/media/pipeline/decode-pool.js';
import * as fx from './fixtures.js';
import { longestBlock } from '../helpers/event-loop.js';

afterAll(() => closeDecodePool());

const ctx: RenderContext = { fileId: 'test-file', accept: undefined, scratchDir: fx.DIR, loadOverlay: async () => null };
/** For renders that measure the event loop: slow on a loaded machine, and not about the deadline. */
const patient: RenderContext = { ...ctx, timeoutMs: 120_000 };
const run = (path: string, mime: string, url: string, c: RenderContext = ctx) =>
  render({ path, mime }, parsePlan(url.split('/').filter(Boolean)), c);

/** A complete 24-bit RLE TGA of w x h in one colour (BGR bytes in the file). */
function denseTga(w: number, h: number): string {
  const packets = Math.ceil((w * h) / 128);
  const b = Buffer.alloc(18 + packets * 4);
  b[2] = 10;
  b.writeUInt16LE(w, 12);
  b.writeUInt16LE(h, 14);
  b[16] = 24;
  b[17] = 0x20;
  for (let i = 0; i < packets; i++) b.set([0xff, 40, 80, 120], 18 + i * 4);
  return fx.file(`dense-${w}x${h}.tga`, b);
}

describe('decode pool', () => {
  test('a decode past the render deadline is stopped with a 400, and the pool serves the next one', async () => {
    const t0 = performance.now();
    await expect(run(denseTga(8000, 8000), 'image/x-tga', '-/preview/100x100/', { ...ctx, timeoutMs: 300 }))
      .rejects.toMatchObject({ status: 400, code: 'ProcessingTimeout' });
    expect(performance.now() - t0).toBeLessThan(3000);
    const r = await run(denseTga(64, 48), 'image/x-tga', '-/format/png/');
    const { data, info } = await sharp(r.body).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height, info.channels]).toEqual([64, 48, 3]);
    expect([...data.subarray(0, 3)]).toEqual([120, 80, 40]);
  }, 30_000);

  test('decoding a 16 Mpx TGA and its alpha check leave the event loop free', async () => {
    // In-process, on the main thread, this took about 1.3 s of blocked loop.
    const { result, blocked } = await longestBlock(() => run(denseTga(4000, 4000), 'image/x-tga', '-/preview/100x100/', patient));
    expect([result.width, result.height]).toEqual([100, 100]);
    expect(blocked).toBeLessThan(50 + 450);
  }, 60_000);

  test('colour maps of a large image (in worker threads) give the same result as inline on a small one', async () => {
    const url = '-/brightness/40/-/gamma/150/-/vibrance/60/-/filter/adaris/-/blur/20/80/-/format/png/';
    const pixelOf = async (w: number, h: number) => {
      const r = await run(await fx.solid(w, h, { r: 200, g: 90, b: 30 }), 'image/png', url, patient);
      const { data } = await sharp(r.body).raw().toBuffer({ resolveWithObject: true });
      return [...data.subarray(0, 3)];
    };
    // 4 Mpx goes to the worker threads, 10x10 is mapped inline: one solid colour either way.
    const large = await pixelOf(2000, 2000);
    expect(large).toEqual(await pixelOf(10, 10));
    expect(large).not.toEqual([200, 90, 30]);
  }, 60_000);

  test('a TGA too short for its declared size is refused before any pixel buffer exists', async () => {
    const b = Buffer.alloc(18 + 3000);
    b[2] = 10;
    b.writeUInt16LE(8000, 12);
    b.writeUInt16LE(8000, 14);
    b[16] = 24;
    await expect(run(fx.file('short.tga', b), 'image/x-tga', '-/preview/')).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/too short/) });
  });

  test('-/json/ of TGA, PCX, BMP and HEIC comes from the header', async () => {
    const facts = async (path: string, mime: string) => JSON.parse((await run(path, mime, '-/json/')).body.toString('utf8')) as Record<string, unknown>;
    expect(await facts(denseTga(300, 200), 'image/x-tga')).toMatchObject({ id: 'test-file', width: 300, height: 200, format: 'TGA', color_mode: 'RGB' });
    expect(await facts(fx.pcx(30, 20, fx.RED), 'image/x-pcx')).toMatchObject({ width: 30, height: 20, format: 'PCX' });
    expect(await facts(fx.bmp(30, 20, fx.RED), 'image/bmp')).toMatchObject({ width: 30, height: 20, format: 'BMP' });
    expect(await facts(`${fx.FIXTURES}/large-4000x3000.heic`, 'image/heic')).toMatchObject({ width: 4000, height: 3000, format: 'HEIC', color_mode: 'RGB' });
  }, 30_000);
});
