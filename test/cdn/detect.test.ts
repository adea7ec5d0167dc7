/**
 * Detector-backed CDN operations over real HTTP against a started server (models in its detector
 * worker threads): detect_faces JSON and headers, a smart crop, blur_region/faces, main_colors.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { FACE_AT, FACE_PHOTO_SIZE, facePhoto } from '../media/photos.js';
import { dims, get, put, putFile } from './helpers.js';

const srv = useServer();
let face: string;

beforeAll(async () => {
  face = await putFile(srv.server, srv.keys, await facePhoto(), 'face.jpg');
});

describe('detectors on the CDN', () => {
  test('detect_faces: the -/json/ facts plus the face box, as JSON', async () => {
    const r = await get(srv.server, `/${face}/detect_faces/`);
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.headers.get('etag')).toMatch(/^"[0-9a-f]{40}"$/);
    const json = JSON.parse(r.text) as { id: string; width: number; height: number; format: string; faces: number[][] };
    expect([json.id, json.width, json.height, json.format]).toEqual([face, FACE_PHOTO_SIZE.width, FACE_PHOTO_SIZE.height, 'JPEG']);
    expect(json.faces).toHaveLength(1);
    const [x, y, w, h] = json.faces[0]!;
    expect(x).toBeGreaterThanOrEqual(FACE_AT.left - 10);
    expect(y).toBeGreaterThanOrEqual(FACE_AT.top - 10);
    expect(x! + w!).toBeLessThanOrEqual(FACE_AT.left + FACE_AT.size + 10);
    expect(y! + h!).toBeLessThanOrEqual(FACE_AT.top + FACE_AT.size + 10);
    const crop = await get(srv.server, `/${face}/-/crop/face/`);
    expect(crop.status).toBe(200);
    expect((await dims(crop.body)).slice(0, 2)).toEqual([w, h]);
  });

  test('scale_crop smart, blur_region/faces, zoom_objects and smart_resize answer images of the asked size', async () => {
    for (const [path, size] of [
      ['-/scale_crop/300x300/smart/', [300, 300]],
      ['-/scale_crop/300x300/smart_objects_faces_points/center/', [300, 300]],
      ['-/blur_region/faces/50/', [1200, 800]],
      ['-/zoom_objects/60/', [1200, 800]],
      ['-/smart_resize/500x500/', [500, 500]],
    ] as const) {
      const r = await get(srv.server, `/${face}/${path}`);
      expect(r.status, `${path}: ${r.text.slice(0, 200)}`).toBe(200);
      expect((await dims(r.body)).slice(0, 2), path).toEqual(size);
    }
  });

  test('main_colors answers JSON; on a non-image it is refused', async () => {
    const r = await get(srv.server, `/${face}/-/main_colors/2/`);
    expect(r.status).toBe(200);
    const json = JSON.parse(r.text) as { main_colors: number[][] };
    expect(json.main_colors).toHaveLength(2);
    const text = await put(srv.server, srv.keys, 'notes.txt', 'hello\n');
    expect((await get(srv.server, `/${text}/detect_faces/`)).status).toBe(400);
  });
});
