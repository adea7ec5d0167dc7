/**
 * Detector-backed operations rendered in process with the real models (tfjs WASM in the
 * detector worker threads, built in dist/): boxes on a real photo whose face position is known.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import sharp from 'sharp';
import { parsePlan } from '../../src/media/plan.js';
import { render, type RenderResult } from '../../src/media/render.js';
import { closeDetectPool, detectionRuns } from '../../src/media/detect/pool.js';
import { findObjectsAndFaces, nsfwScores } from '../../src/media/detect/analyse.js';
import { longestBlock } from '../helpers/event-loop.js';
import { FACE_AT, FACE_PHOTO_SIZE, dinnerPhoto, emptyPhoto, facePhoto } from './photos.js';
import { DIR } from './fixtures.js';

let face: string;
let empty: string;
beforeAll(async () => {
  face = await facePhoto();
  empty = await emptyPhoto();
});
afterAll(() => closeDetectPool());

let fileSeq = 0;
async function run(path: string, url: string, fileId = `file-${++fileSeq}`): Promise<RenderResult> {
  return render({ path, mime: 'image/jpeg' }, parsePlan(url.split('/').filter(Boolean)), { fileId, accept: undefined, scratchDir: DIR, loadOverlay: async () => null, timeoutMs: 120_000 });
}

/** The face square of facePhoto(), with the model's box expected well inside it. */
function expectFaceBox([x, y, w, h]: number[], scale = 1): void {
  const { left, top, size } = FACE_AT;
  expect(x).toBeGreaterThanOrEqual((left - 10) * scale);
  expect(y).toBeGreaterThanOrEqual((top - 10) * scale);
  expect(x! + w!).toBeLessThanOrEqual((left + size + 10) * scale);
  expect(y! + h!).toBeLessThanOrEqual((top + size + 10) * scale);
  // A face, not a speck or the whole portrait.
  expect(w).toBeGreaterThan(size * 0.4 * scale);
  expect(w).toBeLessThan(size * 0.95 * scale);
}

describe('detect_faces', () => {
  test('finds the one face with its box, and a second request on the file does not detect again', async () => {
    const before = detectionRuns();
    const r = await run(face, 'detect_faces/', 'cached-file');
    const json = JSON.parse(r.body.toString()) as { id: string; width: number; height: number; faces: number[][] };
    expect([json.id, json.width, json.height]).toEqual(['cached-file', FACE_PHOTO_SIZE.width, FACE_PHOTO_SIZE.height]);
    expect(json.faces).toHaveLength(1);
    expectFaceBox(json.faces[0]!);
    expect(detectionRuns()).toBe(before + 1);
    // Same file, another URL that needs faces on the original: served from the cache.
    const again = await run(face, 'detect_faces/', 'cached-file');
    expect(again.body.equals(r.body)).toBe(true);
    await run(face, '-/crop/face/', 'cached-file');
    expect(detectionRuns()).toBe(before + 1);
  });

  test('a photo without a face answers an empty list', async () => {
    const json = JSON.parse((await run(empty, 'detect_faces/')).body.toString()) as { faces: unknown[] };
    expect(json.faces).toEqual([]);
  });
});

describe('operations on faces and objects', () => {
  test('crop/face cuts the face box; with a ratio it grows around it; nothing found keeps the image', async () => {
    const faces = JSON.parse((await run(face, 'detect_faces/', 'f1')).body.toString()) as { faces: number[][] };
    const [, , fw, fh] = faces.faces[0]!;
    const cut = await run(face, '-/crop/face/', 'f1');
    expect([cut.width, cut.height]).toEqual([fw, fh]);
    const wide = await run(face, '-/crop/face/2:1/', 'f1');
    expect(Math.abs(wide.width / wide.height - 2)).toBeLessThan(0.02);
    expect(wide.height).toBeGreaterThanOrEqual(fh! - 1);
    const none = await run(empty, '-/crop/face/');
    expect([none.width, none.height]).toEqual([600, 400]);
  });

  test('scale_crop smart types centre the face; without faces they fall back to the alignment', async () => {
    // A 200x800 strip of a 1200x800 photo whose face is right of centre: the strip must hold the
    // face (grey wall on the left otherwise).
    for (const type of ['smart', 'smart_faces', 'smart_faces_objects', 'smart_objects_faces']) {
      const r = await run(face, `-/scale_crop/200x800/${type}/-/format/png/`);
      expect([r.width, r.height]).toEqual([200, 800]);
      const { data } = await sharp(r.body).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      const stats = await sharp(r.body).stats();
      // The wall is flat grey (stdev ~0); a face strip is not.
      expect(stats.channels[0]!.stdev, type).toBeGreaterThan(20);
      expect(data.length).toBe(200 * 800 * 3);
    }
    const fallback = await run(empty, '-/scale_crop/100x400/smart_faces/left/-/format/png/');
    const reference = await run(empty, '-/scale_crop/100x400/left/-/format/png/');
    expect(fallback.body.equals(reference.body)).toBe(true);
  });

  test('blur_region/faces blurs the face and nothing else', async () => {
    const plain = await run(face, '-/format/png/', 'b1');
    const blurred = await run(face, '-/blur_region/faces/300/-/format/png/', 'b1');
    // The middle of the face changed a lot (a strong blur over eyes, nose and mouth).
    const box = { left: FACE_AT.left + 120, top: FACE_AT.top + 120, width: 180, height: 180 };
    const before = await sharp(plain.body).extract(box).greyscale().raw().toBuffer();
    const after = await sharp(blurred.body).extract(box).greyscale().raw().toBuffer();
    let diff = 0;
    for (let i = 0; i < before.length; i++) diff += Math.abs(before[i]! - after[i]!);
    expect(diff / before.length).toBeGreaterThan(8);
    // Far from the face the pixels are untouched.
    const corner = { left: 10, top: 10, width: 100, height: 100 };
    const a = await sharp(plain.body).extract(corner).raw().toBuffer();
    const b = await sharp(blurred.body).extract(corner).raw().toBuffer();
    expect(a.equals(b)).toBe(true);
  });

  test('zoom_objects zooms on the person and keeps the size; smart_resize extends to the size', async () => {
    const zoomed = await run(face, '-/zoom_objects/100/-/format/png/');
    expect([zoomed.width, zoomed.height]).toEqual([1200, 800]);
    // The grey wall left of the portrait is cut away: the left edge is no longer flat grey.
    const left = await sharp(zoomed.body).extract({ left: 0, top: 0, width: 100, height: 800 }).stats();
    expect(left.channels[0]!.stdev).toBeGreaterThan(10);
    const resized = await run(face, '-/smart_resize/600x600/');
    expect([resized.width, resized.height]).toEqual([600, 600]);
  });

  test('crop by an object class: the person at the dinner table, holding their face', async () => {
    const dinner = await dinnerPhoto();
    const faces = JSON.parse((await run(dinner, 'detect_faces/', 'd1')).body.toString()) as { faces: number[][] };
    expect(faces.faces).toHaveLength(1);
    const r = await run(dinner, '-/crop/person/', 'd1');
    expect(r.width).toBeLessThan(600);
    expect(r.width).toBeGreaterThan(faces.faces[0]![2]!);
    expect(r.height).toBeGreaterThan(faces.faces[0]![3]!);
    // No such object: the image stays as it is.
    const none = await run(dinner, '-/crop/giraffe/', 'd1');
    expect([none.width, none.height]).toEqual([600, 451]);
  });

  test('main_colors: the most frequent colours first', async () => {
    const json = JSON.parse((await run(face, '-/main_colors/3/')).body.toString()) as { main_colors: number[][] };
    expect(json.main_colors).toHaveLength(3);
    // Most of the photo is the 128-grey wall.
    for (const c of json.main_colors[0]!) expect(Math.abs(c - 128)).toBeLessThan(12);
  });
});

describe('smart_resize', () => {
  test('extends instead of cropping: the whole photo is kept, edges repeated, the face moved towards the centre', async () => {
    const dinner = await dinnerPhoto(); // 600x451, the face in its upper half
    const plain = await sharp((await run(dinner, '-/format/png/', 'sr')).body).raw().toBuffer({ resolveWithObject: true });
    const out = await sharp((await run(dinner, '-/smart_resize/600x600/-/format/png/', 'sr')).body).raw().toBuffer({ resolveWithObject: true });
    expect([out.info.width, out.info.height]).toEqual([600, 600]);
    const row = (img: typeof out, y: number): Buffer => img.data.subarray(y * img.info.width * img.info.channels, (y + 1) * img.info.width * img.info.channels);
    // The face sits high, so all 149 free rows go on top: the photo is the bottom 451 rows, unchanged.
    for (const y of [0, 100, 200, 450]) expect(row(out, 149 + y).equals(row(plain, y)), `row ${y}`).toBe(true);
    // Above it, the photo's first row repeated.
    for (const y of [0, 50, 148]) expect(row(out, y).equals(row(plain, 0)), `extended row ${y}`).toBe(true);
  });
});

describe('off the event loop', () => {
  test('loading the models and running all three keeps the main thread free', async () => {
    await closeDetectPool(); // a cold start: the models load in the new thread
    const { result, blocked } = await longestBlock(async () => {
      const found = await findObjectsAndFaces({ path: face, mime: 'image/jpeg' }, 'cold-file', 120_000);
      const scores = await nsfwScores({ path: face, mime: 'image/jpeg' }, 120_000);
      return { found, scores };
    });
    expect(result.found.faces).toHaveLength(1);
    expect(result.scores.neutral).toBeGreaterThan(0.5);
    // Loading a model or an inference on the main thread would hold it for seconds.
    expect(blocked).toBeLessThan(500);
  }, 120_000);
});
