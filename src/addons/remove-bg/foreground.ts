/**
 * What the foreground of an image is, for remove_bg's `type_level`: named from the objects
 * CenterNet finds (in the detector threads, shared with the CDN and the labels add-on) as the
 * public service's classes: `person`, `animal`, `car`, `product` for level 1; level 2 and
 * `latest` add `transportation` (vehicles that are not cars). The subject is the most prominent
 * thing found (box area times score); nothing found, or a thing of another kind, is a `product`.
 */
import { centredIn, type ImageFindings } from '../../media/detect/analyse.js';
import type { Detection } from '../../media/detect/types.js';

export type TypeLevel = '1' | '2' | 'latest';

/** Below this score an object does not name the foreground (the labels add-on's floor). */
const MIN_SCORE = 0.4;

const ANIMALS = new Set(['bird', 'cat', 'dog', 'horse', 'sheep', 'cow', 'elephant', 'bear', 'zebra', 'giraffe']);
const CARS = new Set(['car', 'truck', 'bus']);
const TRANSPORT = new Set(['motorcycle', 'bicycle', 'train', 'boat', 'airplane']);

function kindOf(label: string, level: TypeLevel): string {
  if (label === 'person') return 'person';
  if (ANIMALS.has(label)) return 'animal';
  if (CARS.has(label)) return 'car';
  if (TRANSPORT.has(label) && level !== '1') return 'transportation';
  return 'product';
}

/** Objects sure enough to name the subject; a person that holds a face counts from the model's own floor. */
function candidates(found: ImageFindings): Detection[] {
  const holdsFace = (o: Detection): boolean => found.faces.some((f) => centredIn(f, o));
  return found.objects.filter((o) => o.score >= MIN_SCORE || (o.label === 'person' && holdsFace(o)));
}

export function foregroundType(found: ImageFindings, level: TypeLevel): string {
  let best: Detection | null = null;
  let bestWeight = 0;
  for (const o of candidates(found)) {
    const weight = o.width * o.height * o.score;
    if (weight > bestWeight) { best = o; bestWeight = weight; }
  }
  return best ? kindOf(best.label, level) : 'product';
}
