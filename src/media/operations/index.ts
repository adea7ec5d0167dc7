/**
 * The one table of CDN operations. Adding an operation: write its module (parse + apply), add
 * its name to OpName and a row here; the `Record<OpName, AnyOp>` type makes a missing row a
 * build error. Everything reachable from here must only `import type` sharp (plan.ts is pure).
 */
import type { AnyOp } from '../pipeline/types.js';
import * as output from './output.js';
import * as geometry from './geometry.js';
import * as rotation from './rotation.js';
import * as color from './color.js';
import { filter } from './filters.js';
import * as definition from './definition.js';
import { border_radius } from './corners.js';
import { overlay, rect } from './overlay.js';
import { font, text, text_align, text_box } from './text.js';
import { gif2video, detect_faces, main_colors } from './video.js';

export type OpName =
  | 'format' | 'quality' | 'progressive' | 'strip_meta' | 'gif2video'
  | 'preview' | 'resize' | 'stretch' | 'smart_resize' | 'crop' | 'scale_crop' | 'trim' | 'border_radius'
  | 'setfill' | 'zoom_objects'
  | 'autorotate' | 'rotate' | 'flip' | 'mirror'
  | 'overlay' | 'text' | 'font' | 'text_align' | 'text_box' | 'rect'
  | 'brightness' | 'exposure' | 'gamma' | 'contrast' | 'saturation' | 'vibrance' | 'warmth' | 'enhance'
  | 'grayscale' | 'invert' | 'srgb' | 'max_icc_size' | 'filter'
  | 'blur' | 'sharp' | 'blur_region' | 'rasterize'
  | 'json' | 'inline' | 'detect_faces' | 'main_colors';

export const OPERATIONS: Readonly<Record<OpName, AnyOp>> = {
  format: output.format,
  quality: output.quality,
  progressive: output.progressive,
  strip_meta: output.strip_meta,
  gif2video,
  preview: geometry.preview,
  resize: geometry.resize,
  stretch: geometry.stretch,
  smart_resize: geometry.smart_resize,
  crop: geometry.crop,
  scale_crop: geometry.scale_crop,
  trim: geometry.trim,
  border_radius,
  setfill: geometry.setfill,
  zoom_objects: geometry.zoom_objects,
  autorotate: output.autorotate,
  rotate: rotation.rotate,
  flip: rotation.flip,
  mirror: rotation.mirror,
  overlay,
  text,
  font,
  text_align,
  text_box,
  rect,
  brightness: color.brightness,
  exposure: color.exposure,
  gamma: color.gamma,
  contrast: color.contrast,
  saturation: color.saturation,
  vibrance: color.vibrance,
  warmth: color.warmth,
  enhance: color.enhance,
  grayscale: color.grayscale,
  invert: color.invert,
  srgb: output.srgb,
  max_icc_size: output.max_icc_size,
  filter,
  blur: definition.blur,
  sharp: definition.sharp,
  blur_region: definition.blur_region,
  rasterize: output.rasterize,
  json: output.json,
  inline: output.inline,
  detect_faces,
  main_colors,
};

export function lookup(name: string): AnyOp | undefined {
  return Object.hasOwn(OPERATIONS, name) ? OPERATIONS[name as OpName] : undefined;
}
