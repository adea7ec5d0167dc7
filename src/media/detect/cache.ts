/**
 * Detections per original file: a file's bytes never change under its uuid, so faces and objects
 * found once serve every later URL of it (a second scale_crop size, crop/face after detect_faces).
 * In memory, least recently used first out; a failed detection is not kept.
 */
import type { Detection } from './types.js';

const MAX_ENTRIES = 5000;

/** Key of a file's decoded original: the decode options that change its pixels are part of it. */
export function detectionKey(fileId: string, autorotate: boolean, srgb: string): string {
  return `${fileId}:${autorotate ? 'rotated' : 'as-stored'}:${srgb}`;
}
const entries = new Map<string, Promise<Detection[]>>();

export function cachedDetections(key: string | null, run: () => Promise<Detection[]>): Promise<Detection[]> {
  if (key === null) return run();
  const hit = entries.get(key);
  if (hit) {
    entries.delete(key);
    entries.set(key, hit);
    return hit;
  }
  const p = run();
  entries.set(key, p);
  p.catch(() => { if (entries.get(key) === p) entries.delete(key); });
  while (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!);
  return p;
}

export function clearDetectionCache(): void {
  entries.clear();
}
