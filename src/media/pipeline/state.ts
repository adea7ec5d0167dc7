/**
 * The Stage implementation used by render.ts (the only place besides render.ts and decoders that
 * loads sharp). See Stage in types.ts for the contract.
 */
import sharp, { type Sharp, type SharpOptions } from 'sharp';
import { type Deadline, INLINE_PIXEL_MAP_PIXELS, checkIntermediate } from '../limits.js';
import { type PixelKernel, applyKernel, widenGrey } from './pixels.js';
import { kernelInWorker, widenInWorker } from './decode-pool.js';
import { DEFAULT_TEXT, type LoadedImage, type OutputOptions, type RawImage, type Stage, type TextStyle } from './types.js';
import type { Rgba } from './params.js';
import type { Detection, DetectWhat } from '../detect/types.js';
import { cachedDetections } from '../detect/cache.js';
import { detectIn } from '../detect/pool.js';
import { rgbOf, scaleBoxes } from '../detect/sample.js';

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

  constructor(
    private img: Sharp,
    public width: number,
    public height: number,
    public hasAlpha: boolean,
    readonly out: OutputOptions,
    private readonly overlays: (uuid: string) => Promise<LoadedImage>,
    private readonly deadline: Deadline,
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

  async raw(): Promise<RawImage> {
    // No clone(): sharp's clone structured-copies its input, a whole raw buffer on the main
    // thread; every caller replaces the pipeline (fromRaw) after reading its pixels.
    const { data, info } = await this.timed(this.img).toColourspace('srgb').raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true });
    this.flushes++;
    if (info.channels >= 3) return { data, width: info.width, height: info.height, channels: info.channels >= 4 ? 4 : 3 };
    // A greyscale pipeline stays single-channel whatever colourspace is asked: widen it here.
    const grey = info.channels === 2 ? 2 : 1;
    if (info.width * info.height <= INLINE_PIXEL_MAP_PIXELS) {
      return { data: widenGrey(data, grey), width: info.width, height: info.height, channels: grey === 2 ? 4 : 3 };
    }
    return widenInWorker(data, info.width, info.height, grey, this.deadline.remainingMs());
  }

  async kernel(img: RawImage, k: PixelKernel): Promise<RawImage> {
    this.deadline.check();
    if (img.width * img.height <= INLINE_PIXEL_MAP_PIXELS) return applyKernel(img, k);
    return kernelInWorker(img, k, this.deadline.remainingMs());
  }

  fromRaw(raw: RawImage): void {
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
  }

  /** Runs the queued operations into 8-bit sRGB pixels and starts a new pipeline on them. */
  private async materialise(): Promise<void> {
    const raw = await this.raw();
    // Dimensions come from libvips, correcting any estimate (free-angle rotation, trim).
    this.fromRaw(raw);
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
    const raw = await this.raw();
    this.fromRaw(raw);
    const rgb = await rgbOf(this.create(raw.data, { raw }), raw.width, raw.height);
    return scaleBoxes(await detectIn(what, rgb, this.deadline.remainingMs()), rgb, size);
  }

  /** The pipeline to encode; the caller adds output options only. */
  current(): Sharp {
    return this.img;
  }
}
