/**
 * The work budget of one render: chain length and requested sizes refused from
 * the plan, every intermediate image capped before it is committed, a deadline for the whole
 * render, and solid fills made by libvips instead of a JS loop on the main thread.
 */
import { describe, expect, test } from 'vitest';
import sharp from 'sharp';
import { parsePlan } from '../../src/media/plan.js';
import { render, type RenderContext } from '../../src/media/render.js';
import { MAX_OPERATIONS } from '../../src/media/limits.js';
import * as fx from './fixtures.js';
import { longestBlock } from '../helpers/event-loop.js';

const ctx: RenderContext = { fileId: 'test-file', accept: undefined, scratchDir: fx.DIR, loadOverlay: async () => null };
/** For renders that measure the event loop: slow on a loaded machine, and not about the deadline. */
const patient: RenderContext = { ...ctx, timeoutMs: 120_000 };
const plan = (url: string) => parsePlan(url.split('/').filter(Boolean));
const run = (path: string, url: string, c: RenderContext = ctx) => render({ path, mime: 'image/png' }, plan(url), c);

describe('refused from the plan, before any byte is read', () => {
  test(`at most ${MAX_OPERATIONS} operations in one URL`, () => {
    const chain = (n: number) => Array.from({ length: n }, (_, i) => (i % 2 ? '-/scale_crop/800x600/' : '-/scale_crop/3000x3000/')).join('');
    expect(MAX_OPERATIONS).toBe(32);
    expect(() => plan(chain(32))).not.toThrow();
    expect(() => plan(chain(33))).toThrow(/Too many operations: 33, at most 32/);
    expect(() => plan(chain(300))).toThrow(expect.objectContaining({ status: 400 }));
    // Client library tags are not operations.
    expect(() => plan(chain(32) + '-/@clib/blocks/1.2.3/uc-img/')).not.toThrow();
  });

  test('a requested size above the 75 Mpx intermediate limit', () => {
    expect(() => plan('-/resize/16000x16000/-/resize/100x100/')).toThrow(expect.objectContaining({ status: 400, message: expect.stringMatching(/"resize": 16000x16000 \(256 Mpx\)/) }));
    expect(() => plan('-/scale_crop/10000x10000/')).toThrow(/"scale_crop"/);
    expect(() => plan('-/smart_resize/9000x9000/')).toThrow(/"smart_resize"/);
    expect(() => plan('-/crop/9000x9000/')).toThrow(/"crop"/);
    // Within the limit, or a size that depends on the image: left to the stage check.
    expect(() => plan('-/resize/8000x8000/-/resize/100x/')).not.toThrow();
    expect(() => plan('-/resize/16000x/')).not.toThrow();
    expect(() => plan('-/crop/50px50p/')).not.toThrow();
  });
});

describe('intermediate images', () => {
  test('a stage above 75 Mpx is refused before its pixels exist', async () => {
    const p = await fx.solid(100, 100, fx.RED);
    const t0 = performance.now();
    // 9000x9000 = 81 Mpx, known only once the source's ratio is.
    await expect(run(p, '-/resize/9000x/-/resize/100x/')).rejects.toMatchObject({ status: 400, code: 'ImageTooLarge' });
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  test('a smart crop\'s cover-scaled image counts as an intermediate', async () => {
    const p = await fx.gradient(640, 480);
    const t0 = performance.now();
    // Scored whole before the cut: 21845x16384 (358 Mpx) for a 3000x16384 result. It used to run
    // until the 20 s deadline, holding GBs of libvips memory.
    await expect(run(p, '-/scale_crop/3000x16384/smart_points/-/invert/-/mirror/')).rejects.toMatchObject({ status: 400, code: 'ImageTooLarge', message: expect.stringMatching(/21845x16384/) });
    expect(performance.now() - t0).toBeLessThan(2000);
    // A cover-scale within the limit is still scored; a plain one is cut without scoring.
    expect((await run(p, '-/scale_crop/800x600/smart_points/')).width).toBe(800);
    expect((await run(p, '-/scale_crop/3000x1000/center/')).height).toBe(1000);
  });

  test('an off-image crop is filled by libvips without blocking the event loop', async () => {
    const p = await fx.solid(100, 100, fx.RED);
    const { result, blocked } = await longestBlock(() => run(p, '-/setfill/00ff00/-/crop/8000x8000/9000,9000/-/resize/100x/-/format/png/', patient));
    const { data, info } = await sharp(result.body).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([100, 100]);
    expect([...data.subarray(0, 3)]).toEqual([0, 255, 0]);
    // 64 Mpx filled in JS blocked the loop for 0.9 s; the allowance covers preemption on a loaded
    // 2-core machine (preemption inflates a busy loop's share: up to ~320 ms measured with other
    // test files and helpers running at once).
    expect(blocked).toBeLessThan(50 + 450);
  });

  test('rect fills are made by libvips too', async () => {
    const p = await fx.solid(6000, 6000, fx.RED);
    const { result, blocked } = await longestBlock(() => run(p, '-/rect/0000ff/100px100p/0,0/-/resize/100x/-/format/png/', patient));
    const { data } = await sharp(result.body).raw().toBuffer({ resolveWithObject: true });
    expect([...data.subarray(0, 3)]).toEqual([0, 0, 255]);
    expect(blocked).toBeLessThan(50 + 450);
  });
});

describe('deadline', () => {
  test('a render past its deadline is a 400, answered at the deadline', async () => {
    const p = await fx.gradient(400, 400);
    const t0 = performance.now();
    // A sigma-20 blur of a 64 Mpx intermediate takes seconds of libvips time.
    await expect(run(p, '-/resize/8000x8000/-/blur/200/-/resize/100x/', { ...ctx, timeoutMs: 300 }))
      .rejects.toMatchObject({ status: 400, code: 'ProcessingTimeout' });
    expect(performance.now() - t0).toBeLessThan(3000);
  }, 30_000);

  test('an ordinary render is well within the default deadline', async () => {
    const r = await run(await fx.gradient(400, 400), '-/resize/200x/-/blur/20/');
    expect(r.width).toBe(200);
  });
});
