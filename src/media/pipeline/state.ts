/**
 * The Stage implementation used by render.ts (the only place besides render.ts and decoders that
 * loads sharp). See Stage in types.ts for the contract.
 *
 * Images above INLINE_PIXEL_MAP_PIXELS are materialised and mapped through scratch files, not
 * buffers: libvips writes the pipeline to a `.v` file, a worker thread reads it, runs the step and
 * writes the result (pixel-file.ts), and the pipeline goes on from that file. The main thread then
 * never allocates, touches or frees their pixels: for a 74 Mpx image each of those costs the thread
 * that does it 100-700 ms on a machine with slow page faults (docs/reliability.md).
 */
import type { Sharp, SharpOptions } from 'sharp';
import sharp from '../lazy-sharp.js';
import { type Deadline, INLINE_PIXEL_MAP_PIXELS, checkIntermediate } from '../limits.js';
import { widenGrey } from './pixels.js';
import { pixelFileInWorker, widenInWorker } from './decode-pool.js';
import { type PixelStep, runStep, srgbPixels } from './pixel-step.js';
import { fade } from './fade.js';
import type { Scratch } from './scratch.js';
import { DEFAULT_TEXT, type LoadedImage, type OutputOptions, type RawImage, type Stage, type TextStyle } from './types.js';
import type { Rgba } from './params.js';
import type { Detection, DetectWhat } from '../detect/types.js';
import { cachedDetections } from '../detect/cache.js';
import { detectIn } from '../detect/pool.js';
import { rgbOf, scaleBoxes } from '../detect/sample.js';

/**
 * Whether `img` has sharp's greyscale queued (`-/grayscale/`), read from sharp's options: its raw
 * output then keeps only the first band, and the scratch route must cut the same (pixel-file.ts).
 */
function greyscaleQueued(img: Sharp): boolean {
  return (img as unknown as { options?: { greyscale?: unknown } }).options?.greyscale === true;
}

const WHITE: Rgba = { r: 255, g: 255, b: 255, alpha: 1 };
const CLEAR: Rgba = { r: 0, g: 0, b: 0, alpha: 0 };

export class PipelineStage implements Stage {
  fill: Rgba | null = null;
  stretch: 'on' | 'off' | 'fill' = 'on';
  text: TextStyle = DEFAULT_TEXT;
  /** Operations queued on `img` since it was last materialised. */
  private pending = false;
  /** Number of materialisations, for tests and keep_profile (a profile survives only unflushed). */
  flushes = 0;
  /** No transform has touched the decoded original yet: detections may come from the file's cache. */
  private pristine = true;
  /** The scratch file `img` reads, 8-bit sRGB as pixel-file.ts wrote it; null when it reads anything else. */
  private scratchInput: string | null = null;
  /** Scratch files of overlays the queued operations composite (drawOver): read when `img` next runs. */
  private composited: string[] = [];

  constructor(
    private img: Sharp,
    public width: number,
    public height: number,
    public hasAlpha: boolean,
    readonly out: OutputOptions,
    private readonly overlays: (uuid: string) => Promise<LoadedImage>,
    private readonly deadline: Deadline,
    /** Where large intermediate images go (see the header). */
    private readonly scratch: Scratch,
    /** Cache key of the decoded original's detections (file and decode options), null = no cache. */
    private readonly detectKey: string | null = null,
  ) {
    checkIntermediate(width, height);
  }

  /** A sharp pipeline bounded by the render's deadline. */
  readonly create = (input?: Buffer, options?: SharpOptions): Sharp => this.timed(sharp(input, options));

  /** Gives a pipeline the time left to the render as its libvips timeout. */
  timed(img: Sharp): Sharp {
    this.deadline.check();
    return img.timeout({ seconds: this.deadline.seconds() });
  }

  async pipe(): Promise<Sharp> {
    this.deadline.check();
    if (this.pending) await this.materialise();
    return this.img;
  }

  commit(img: Sharp, width: number, height: number, hasAlpha = this.hasAlpha): void {
    checkIntermediate(width, height);
    this.img = img;
    this.width = width;
    this.height = height;
    this.hasAlpha = hasAlpha;
    this.pending = true;
    this.pristine = false;
  }

  async settle(): Promise<void> {
    await this.materialise();
  }

  /**
   * 8-bit sRGB pixels of a small image (3 or 4 channels), for the inline route only: operations
   * go through mapPixels. This runs the current pipeline: the caller goes on with `fromRaw`.
   */
  private async raw(): Promise<RawImage> {
    // No clone(): sharp's clone structured-copies its input, a whole raw buffer on the main
    // thread; every caller replaces the pipeline (fromRaw) after reading its pixels.
    const { raw, grey } = await srgbPixels(this.timed(this.img));
    this.flushes++;
    if (grey === null) return raw;
    // A greyscale pipeline comes back single-channel (srgbPixels): widen it here.
    if (raw.width * raw.height <= INLINE_PIXEL_MAP_PIXELS) return { ...raw, data: widenGrey(raw.data, grey) };
    return widenInWorker(raw.data, raw.width, raw.height, grey, this.deadline.remainingMs());
  }

  async mapPixels(step: PixelStep | null): Promise<void> {
    this.deadline.check();
    const previous = this.scratchInput;
    if (!this.large()) {
      const img = await this.raw();
      this.fromRaw(step ? await runStep(img, step, this.create) : img);
    } else {
      // Already materialised in a scratch file: nothing to do without a step, and no copy with one.
      if (!this.pending && previous !== null && step === null) return;
      const fresh = this.pending || previous === null;
      const greyscale = fresh && greyscaleQueued(this.img);
      const input = fresh ? await this.writeScratch() : previous;
      const output = await this.scratch.file();
      const px = await pixelFileInWorker({ input, output, step, greyscale }, this.deadline.remainingMs());
      this.flushes++;
      this.restart(sharp(output), px.width, px.height, px.channels === 4);
      this.scratchInput = output;
      if (input !== previous) await this.scratch.remove(input);
    }
    // The pipeline that read `previous` has run to its end: nothing reads that file any more.
    if (previous !== null) await this.scratch.remove(previous);
    // Nor the overlays it composited (files of overlays drawn since go when the render ends).
    for (const p of this.composited.splice(0)) await this.scratch.remove(p);
  }

  async drawOver(over: Sharp, box: { left: number; top: number; width: number; height: number }, opacity: number): Promise<void> {
    this.deadline.check();
    const rgba = over.ensureAlpha().toColourspace('srgb');
    if (box.width * box.height <= INLINE_PIXEL_MAP_PIXELS) {
      const { data } = await this.timed(rgba).raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true });
      const px = fade({ data, width: box.width, height: box.height, channels: 4 }, opacity);
      const img = await this.pipe();
      this.commit(img.composite([{ input: px.data, raw: { width: box.width, height: box.height, channels: 4 }, left: box.left, top: box.top }]), this.width, this.height);
      return;
    }
    // Large: libvips writes the overlay to a scratch file, a worker fades it into another (the same
    // fade as above), and libvips composites from that file when the pipeline next runs.
    const input = await this.scratch.file();
    await this.timed(rgba).toFile(input);
    const output = await this.scratch.file();
    try {
      const step: PixelStep | null = opacity < 1 ? { kind: 'fade', opacity } : null;
      await pixelFileInWorker({ input, output, step, greyscale: false }, this.deadline.remainingMs());
    } finally {
      await this.scratch.remove(input);
    }
    const img = await this.pipe();
    this.commit(img.composite([{ input: output, left: box.left, top: box.top }]), this.width, this.height);
    this.composited.push(output);
  }

  /** The current pipeline run by libvips into a new scratch file (no pixel on this thread). */
  private async writeScratch(): Promise<string> {
    const p = await this.scratch.file();
    // The worker converts to 8-bit as raw() does: a `.v` file keeps whatever depth libvips had.
    await this.timed(this.img).toColourspace('srgb').toFile(p);
    return p;
  }

  /** Above INLINE_PIXEL_MAP_PIXELS the pixels go through scratch files (see the header). */
  private large(): boolean {
    return this.width * this.height > INLINE_PIXEL_MAP_PIXELS;
  }

  private fromRaw(raw: RawImage): void {
    this.restart(sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: raw.channels } }), raw.width, raw.height, raw.channels === 4);
  }

  solid(width: number, height: number, colour: Rgba): void {
    checkIntermediate(width, height);
    // libvips fills it when the next pipeline runs, off the main thread.
    const background = { r: colour.r, g: colour.g, b: colour.b, alpha: colour.alpha };
    this.restart(sharp({ create: { width, height, channels: 4, background } }), width, height, true);
  }

  /** A fresh pipeline on a new input has nothing queued: the next operation can use it directly. */
  private restart(img: Sharp, width: number, height: number, hasAlpha: boolean): void {
    checkIntermediate(width, height);
    this.img = img;
    this.width = width;
    this.height = height;
    this.hasAlpha = hasAlpha;
    this.pending = false;
    this.pristine = false;
    this.scratchInput = null;
  }

  /**
   * Runs the queued operations into 8-bit sRGB pixels and starts a new pipeline on them.
   * Dimensions come from libvips, correcting any estimate (free-angle rotation, trim).
   */
  private async materialise(): Promise<void> {
    await this.mapPixels(null);
  }

  async loadOverlay(uuid: string): Promise<LoadedImage> {
    const loaded = await this.overlays(uuid);
    return { ...loaded, img: this.timed(loaded.img) };
  }

  background(): Rgba {
    return this.fill ?? (this.hasAlpha ? CLEAR : WHITE);
  }

  async detect(what: DetectWhat): Promise<readonly Detection[]> {
    this.deadline.check();
    const size = { width: this.width, height: this.height };
    if (this.pristine) {
      // The original as decoded: a downscaled copy is read from a clone, the pipeline stays as is.
      const img = this.timed(this.img.clone());
      const key = this.detectKey === null ? null : `${this.detectKey}:${what}`;
      return cachedDetections(key, async () => {
        const rgb = await rgbOf(img, size.width, size.height);
        return scaleBoxes(await detectIn(what, rgb, this.deadline.remainingMs()), rgb, size);
      });
    }
    let rgb: Awaited<ReturnType<typeof rgbOf>>;
    if (this.large()) {
      // Materialised in a scratch file, which a clone reads without copying anything here.
      await this.materialise();
      rgb = await rgbOf(this.timed(this.img.clone()), this.width, this.height);
    } else {
      const raw = await this.raw();
      this.fromRaw(raw);
      rgb = await rgbOf(this.create(raw.data, { raw }), raw.width, raw.height);
    }
    return scaleBoxes(await detectIn(what, rgb, this.deadline.remainingMs()), rgb, size);
  }

  /** The pipeline to encode; the caller adds output options only. */
  current(): Sharp {
    return this.img;
  }
}
