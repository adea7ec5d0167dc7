/**
 * Types shared by the operation table. Only `import type` of sharp here and in every operation
 * module: the table is imported by plan.ts, which must stay pure (no native module load).
 */
import type { Sharp, SharpOptions } from 'sharp';
import type { Rgba } from './params.js';
import type { RawImage } from './pixels.js';
import type { PixelStep } from './pixel-step.js';
import type { Detection, DetectWhat } from '../detect/types.js';

export type { RawImage };

/**
 * - `setting`: output option read by the encoder; position in the URL does not matter.
 * - `transform`: pixel work applied in URL order (see render.ts for the fixed phase order).
 * - `state`: modifies how later transforms behave (stretch, setfill, font, text_align, text_box).
 */
export type OpKind = 'setting' | 'transform' | 'state';

export interface OpDef<A> {
  readonly kind: OpKind;
  /** Several occurrences all apply; otherwise the later duplicate wins. */
  readonly stackable?: boolean;
  /** One of resize/smart_resize/scale_crop/preview: its presence disables the implicit preview. */
  readonly sizing?: boolean;
  /** Changes the width/height attributes of an SVG served as SVG (spec rule 4). */
  readonly svgGeometry?: boolean;
  /** Allowed together with gif2video. */
  readonly videoCompanion?: boolean;
  /** Pure: params as split from the URL (already percent-decoded) to typed args, or AppError 400. */
  parse(params: readonly string[]): A;
  /** Applies the operation to the pipeline stage. Settings and state ops only touch `s.out`/state. */
  apply(s: Stage, args: A): void | Promise<void>;
}

// biome-ignore lint/suspicious/noExplicitAny: the table holds operations of every argument type; each one's parse feeds only its own apply
export type AnyOp = OpDef<any>;

export type OutputFormat = 'jpeg' | 'png' | 'webp' | 'avif';
export type Quality = 'smart' | 'smart_retina' | 'normal' | 'better' | 'best' | 'lighter' | 'lightest';

export interface OutputOptions {
  format: OutputFormat | 'auto' | 'preserve' | null;
  quality: Quality | null;
  progressive: boolean;
  stripMeta: 'all' | 'none' | 'sensitive';
  srgb: 'fast' | 'icc' | 'keep_profile';
  maxIccKb: number | null;
  autorotate: boolean;
  rasterize: boolean;
}

export interface TextStyle {
  weight: 'regular' | 'bold';
  style: 'normal' | 'italic';
  size: number | null;
  color: Rgba;
  family: string;
  alignH: 'left' | 'center' | 'right';
  alignV: 'top' | 'center' | 'bottom';
  box: 'none' | 'fit' | 'line' | 'fill';
  boxColor: Rgba;
  boxPadding: number;
}

/** Text style before any `font`/`text_align`/`text_box` operation. */
export const DEFAULT_TEXT: TextStyle = {
  weight: 'regular', style: 'normal', size: null, color: { r: 0, g: 0, b: 0, alpha: 1 }, family: 'DejaVu Sans',
  alignH: 'left', alignV: 'top', box: 'none', boxColor: { r: 255, g: 255, b: 255, alpha: 1 }, boxPadding: 10,
};

export interface LoadedImage { img: Sharp; width: number; height: number; hasAlpha: boolean }

/**
 * The image being processed. sharp reorders operations queued on one pipeline into its own fixed
 * order, so to keep URL order each transform takes the pipeline with `pipe()` (which materialises
 * any earlier pending work first) and hands it back with `commit()`. After a resize the
 * materialised image is small, so this costs little; a first resize still gets shrink-on-load.
 */
export interface Stage {
  width: number;
  height: number;
  hasAlpha: boolean;
  /** setfill colour; null = not set (transparent where alpha is possible, else white). */
  fill: Rgba | null;
  stretch: 'on' | 'off' | 'fill';
  text: TextStyle;
  readonly out: OutputOptions;
  /**
   * The sharp constructor, injected so operation modules never load the native module; its
   * pipelines are bounded by the render's deadline.
   */
  readonly create: (input?: Buffer, options?: SharpOptions) => Sharp;
  /**
   * Takes the pipeline for one operation; earlier pending work is materialised first. Refused
   * once the render's deadline has passed.
   */
  pipe(): Promise<Sharp>;
  /** Gives the pipeline back with the dimensions it will produce (refused above the pixel limit). */
  commit(img: Sharp, width: number, height: number, hasAlpha?: boolean): void;
  /** Materialises now and reads real dimensions (for trim and free-angle rotation). */
  settle(): Promise<void>;
  /**
   * Runs a pixel step (a colour map, a blur, a blur of boxes, a trim) over the current image and
   * goes on with the result. Small images are mapped inline; larger ones in a worker thread
   * through scratch files, so no large buffer lives on the main thread (bounded by the render's
   * deadline). This is the only way an operation reads the whole image's pixels: the stage has no
   * raw read for them (a 74 Mpx buffer freed on the main thread blocked it > 50 ms).
   */
  mapPixels(step: PixelStep): Promise<void>;
  /**
   * Draws another pipeline (an overlay, already cut to its box, which lies inside the image) over
   * the image at `box`, its alpha scaled by `opacity`. A small one is read out and composited from
   * a buffer; a larger one goes through scratch files and a worker like `mapPixels`, and libvips
   * composites it from the file, so its pixels never sit in a main-thread buffer.
   */
  drawOver(over: Sharp, box: { left: number; top: number; width: number; height: number }, opacity: number): Promise<void>;
  /** Replaces the image with a solid RGBA fill, built by libvips (never a JS loop). */
  solid(width: number, height: number, colour: Rgba): void;
  /** Decodes another image of the same project for overlay (`self` = the source). */
  loadOverlay(uuid: string | 'self'): Promise<LoadedImage>;
  /** Background for areas outside the image: setfill, else transparent (alpha) or white. */
  background(): Rgba;
  /**
   * Faces or objects in the current image, in its pixel coordinates, found by the detector
   * worker threads (media/detect/). While no transform has changed the decoded original, the
   * answer is cached per file: a second URL of the same file does not detect again.
   */
  detect(what: DetectWhat): Promise<readonly Detection[]>;
}
