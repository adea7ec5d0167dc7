/**
 * A large image's pixels handed to a worker thread for a colour map are copied in slices, never in
 * one piece on the event loop (src/media/pipeline/decode-pool.ts `movableCopy`): in one piece, the
 * 123 MB of an 8192x5000 image held the loop for about 70 ms (222 MB here: about 100), which the CDN fuzzer's full run
 * confirmed as stalls (`-/smart_resize/8192x5000/-/warmth/7/` and the like).
 */
import { afterAll, describe, expect, test } from 'vitest';
import { parsePlan } from '../../src/media/plan.js';
import { render, type RenderContext } from '../../src/media/render.js';
import { closeDecodePool } from '../../src/media/pipeline/decode-pool.js';
import * as fx from './fixtures.js';
import { longestBlock } from '../helpers/event-loop.js';

afterAll(() => closeDecodePool());

const ctx: RenderContext = { fileId: 'pixel-copy', accept: undefined, loadOverlay: async () => null, timeoutMs: 120_000 };

describe('colour maps of a 74 Mpx image', () => {
  test('leave the event loop free (longest block under the 50 ms of a stall)', async () => {
    const path = await fx.solid(10000, 7400, { r: 200, g: 90, b: 30 });
    const url = '-/warmth/7/-/saturation/10/-/resize/64x/-/format/png/';
    // Twice: the first run also warms the worker pool up.
    await render({ path, mime: 'image/png' }, parsePlan(url.split('/').filter(Boolean)), ctx);
    // Three measured runs, judged by the least blocked: a copy in one piece blocks every run (70-100
    // ms), while a busy machine stretches a block only now and then (CI on a machine at a load
    // average of 8 once measured 55 ms for a run whose block is about 24 ms when quiet: the main
    // thread freeing the large pixel buffers in a GC).
    const blocks: number[] = [];
    for (let i = 0; i < 3; i++) {
      const { result, blocked } = await longestBlock(() => render({ path, mime: 'image/png' }, parsePlan(url.split('/').filter(Boolean)), ctx));
      expect(result.width).toBe(64);
      blocks.push(blocked);
    }
    console.log(`[pixel-copy] longest blocks ${blocks.map((b) => b.toFixed(1)).join(', ')} ms`);
    expect(Math.min(...blocks)).toBeLessThan(50);
  }, 120_000);
});
