/**
 * A pixel step on a large image, run inside a worker thread of decode-pool.ts on scratch files:
 * libvips reads the stage's pixels from `input` (a libvips `.v` file the main thread had written),
 * the step runs here, and libvips writes the result to `output` for the main thread to go on
 * with. Every large buffer is thus allocated, touched and freed by this thread and libvips' own,
 * never by the main thread: on a machine with slow page faults, first-touching or freeing the
 * 222 MB of a 74 Mpx image costs the thread that does it 100-700 ms (docs/reliability.md).
 * Loaded by the worker only when such a task comes (sharp is already loaded by the main thread,
 * as libvips requires of worker threads on glibc).
 */
import { rm } from 'node:fs/promises';
import type { SharpOptions } from 'sharp';
import sharp from '../lazy-sharp.js';
import { firstChannelAsGrey } from './pixels.js';
import { type PixelStep, runStep, srgbRaw } from './pixel-step.js';

export interface PixelFileTask {
  input: string;
  output: string;
  /** null: only the conversion to 8-bit sRGB (a materialisation). */
  step: PixelStep | null;
  /**
   * `input` came from a pipeline with sharp's greyscale queued. sharp's raw output of such a
   * pipeline keeps only its first band (alpha dropped), which the inline route gets; a `.v` file
   * keeps every band, so the same cut is made here.
   */
  greyscale: boolean;
  /** The render's deadline (epoch ms): each pipeline here gets the time left as its libvips timeout. */
  endsAtMs: number;
}

export interface PixelFileResult { width: number; height: number; channels: 3 | 4 }

export async function mapPixelFile(task: PixelFileTask): Promise<PixelFileResult> {
  // sharp counts whole seconds, and 0 would mean none: rounded up, at least 1.
  const seconds = (): number => Math.max(1, Math.ceil((task.endsAtMs - Date.now()) / 1000));
  const create = (input?: Buffer, options?: SharpOptions) => sharp(input, options).timeout({ seconds: seconds() });
  try {
    let img = await srgbRaw(sharp(task.input).timeout({ seconds: seconds() }));
    if (task.greyscale) img = { data: firstChannelAsGrey(img.data, img.channels), width: img.width, height: img.height, channels: 3 };
    if (task.step) img = await runStep(img, task.step, create);
    await create(img.data, { raw: { width: img.width, height: img.height, channels: img.channels } }).toFile(task.output);
    return { width: img.width, height: img.height, channels: img.channels };
  } catch (e) {
    // A partial output is no use to anyone; the stage removes its scratch files too, this is sooner.
    await rm(task.output, { force: true });
    throw e;
  }
}
