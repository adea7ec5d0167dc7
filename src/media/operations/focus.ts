/**
 * Pure geometry over detections (media/detect/): the focus of an image for the smart crops, crop
 * by object tag, zoom_objects and smart_resize. Detection itself is the stage's `detect()`.
 */
import type { Stage } from '../pipeline/types.js';
import type { Detection } from '../detect/types.js';
import { COCO_LABELS } from '../detect/labels.js';

export interface Box { x: number; y: number; width: number; height: number }

/** The smallest box holding every detection, or null for none. */
export function union(found: readonly Box[]): Box | null {
  if (found.length === 0) return null;
  const x = Math.min(...found.map((d) => d.x));
  const y = Math.min(...found.map((d) => d.y));
  const x2 = Math.max(...found.map((d) => d.x + d.width));
  const y2 = Math.max(...found.map((d) => d.y + d.height));
  return { x, y, width: x2 - x, height: y2 - y };
}

/** Tags of crop-by-object: `face`, `image` (everything detected), or a COCO class (`person`, `cat`, `traffic_light`). */
export const CROP_TAGS: readonly string[] = ['face', 'image', ...COCO_LABELS.map((l) => l.replace(/ /g, '_'))];

/** What a tag selects in the current image. */
export async function tagged(s: Stage, tag: string): Promise<readonly Detection[]> {
  if (tag === 'face') return s.detect('faces');
  if (tag === 'image') return [...(await s.detect('faces')), ...(await s.detect('objects'))];
  const label = tag.replace(/_/g, ' ');
  return (await s.detect('objects')).filter((d) => d.label === label);
}

export type SmartSource = 'faces' | 'objects' | 'points';

/**
 * `smart_faces_objects_points` -> [faces, objects, points]: the first that finds something
 * decides; `points` is libvips' saliency ('attention'), which always finds something.
 */
export function smartOrder(type: string): SmartSource[] {
  const name = type === 'smart' ? 'smart_faces_objects_points' : type;
  return name.slice('smart_'.length).split('_') as SmartSource[];
}

/** Focus box of the first source in `order` that finds something; 'attention' for points. */
export async function smartFocus(s: Stage, order: readonly SmartSource[]): Promise<Box | 'attention' | null> {
  for (const source of order) {
    if (source === 'points') return 'attention';
    const box = union(await s.detect(source));
    if (box) return box;
  }
  return null;
}

const clamp = (v: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, v));

/** Start of a span of `len` centred on `centre`, kept inside 0..total. */
export function centredStart(centre: number, len: number, total: number): number {
  return clamp(Math.round(centre - len / 2), 0, Math.max(0, total - len));
}
