/**
 * Whole-image analysis for the add-ons (labels, moderation): the file decoded and autorotated
 * like a CDN render, downscaled by libvips, and handed to the detector threads. Detections of
 * faces and objects share the CDN's per-file cache.
 */
import { openSource, type SourceFile } from '../pipeline/source.js';
import { cachedDetections, detectionKey } from './cache.js';
import { NSFW_INPUT, classifyNsfw, detectIn } from './pool.js';
import { rgbOf, scaleBoxes } from './sample.js';
import type { Detection, NsfwScores } from './types.js';

export interface ImageFindings { width: number; height: number; objects: Detection[]; faces: Detection[] }

/** Faces and objects of a stored image, in pixels of the autorotated image. `fileId` keys the cache. */
export async function findObjectsAndFaces(src: SourceFile, fileId: string, timeoutMs: number): Promise<ImageFindings> {
  const opened = await openSource(src, { autorotate: true, ignoreIcc: false, timeoutMs });
  const size = { width: opened.width, height: opened.height };
  let sample: Promise<Awaited<ReturnType<typeof rgbOf>>> | null = null;
  const rgb = () => (sample ??= rgbOf(opened.img.clone(), size.width, size.height));
  // Same key as a CDN render with default options (render.ts detectKey), so either warms the other.
  const key = (what: string): string => `${detectionKey(fileId, true, 'icc')}:${what}`;
  const run = (what: 'faces' | 'objects') => cachedDetections(key(what), async () => {
    const img = await rgb();
    return scaleBoxes(await detectIn(what, img, timeoutMs), img, size);
  });
  const objects = await run('objects');
  const faces = await run('faces');
  return { ...size, objects, faces };
}

/** nsfwjs' five class scores of a stored image (the whole image squeezed to 224x224). */
export async function nsfwScores(src: SourceFile, timeoutMs: number): Promise<NsfwScores> {
  const opened = await openSource(src, { autorotate: true, ignoreIcc: false, timeoutMs });
  const img = await rgbOf(opened.img, opened.width, opened.height, NSFW_INPUT, { w: NSFW_INPUT, h: NSFW_INPUT });
  return classifyNsfw(img, timeoutMs);
}

/** Centre of `inner` inside `outer`. */
export function centredIn(inner: Detection, outer: Detection): boolean {
  const cx = inner.x + inner.width / 2;
  const cy = inner.y + inner.height / 2;
  return cx >= outer.x && cx <= outer.x + outer.width && cy >= outer.y && cy <= outer.y + outer.height;
}

/**
 * The faces that a person found by the object model holds. BlazeFace answers for any face-like
 * pattern (a cat's face, a round pill with a mark on it), so a face counts as a person's only
 * when its centre is inside a person's box.
 */
export function backedFaces(found: ImageFindings): Detection[] {
  const people = found.objects.filter((o) => o.label === 'person');
  return found.faces.filter((f) => people.some((p) => centredIn(f, p)));
}
