/**
 * `aws_rekognition_detect_labels` and `aws_rekognition_detect_moderation_labels` over real HTTP
 * against a started server, with the real models (CenterNet, BlazeFace, nsfwjs) in its detector
 * threads, on real photos shipped by @vladmandic/human (test/media/photos.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import { useServer } from '../helpers/use-server.js';
import { dinnerPhoto, facePhoto } from '../media/photos.js';
import { catPhoto } from '../media/labelled-photos.js';

const LABELS = 'aws_rekognition_detect_labels';
const MODERATION = 'aws_rekognition_detect_moderation_labels';
const s = useServer();
const json = (body: unknown) => ({ body: JSON.stringify(body), contentType: 'application/json' });

let dinner: string;
let face: string;
let cat: string;
beforeAll(async () => {
  cat = await s.uploadFile('cat.jpg', fs.readFileSync(catPhoto()));
  dinner = await s.uploadFile('dinner.jpg', fs.readFileSync(await dinnerPhoto()));
  face = await s.uploadFile('face.jpg', fs.readFileSync(await facePhoto()));
});

interface Label { Name: string; Confidence: number; Instances: { BoundingBox: { Top: number; Left: number; Width: number; Height: number }; Confidence: number }[]; Parents: { Name: string }[] }
interface Moderation { Name: string; ParentName: string; Confidence: number }

/** Executes the add-on, waits for `done`, answers appdata.<name>. */
async function runAddon(name: string, target: string, params?: unknown): Promise<{ version: string; data: Record<string, unknown> }> {
  const r = await s.call('POST', `/addons/${name}/execute/`, json(params === undefined ? { target } : { target, params }));
  expect(r.status, r.text).toBe(200);
  const requestId = r.json.request_id as string;
  const end = Date.now() + 120_000;
  for (;;) {
    const st = await s.call('GET', `/addons/${name}/execute/status/?request_id=${requestId}`);
    expect(st.status).toBe(200);
    if (st.json.status === 'done') break;
    expect(st.json.status, JSON.stringify(st.json)).toBe('in_progress');
    if (Date.now() > end) throw new Error('add-on did not finish');
    await new Promise((res) => setTimeout(res, 200));
  }
  const info = await s.call('GET', `/files/${target}/?include=appdata`);
  return info.json.appdata[name];
}

describe('aws_rekognition_detect_labels', () => {
  it('finds the person and the face, with instances, relative boxes, parents and the model name', async () => {
    const entry = await runAddon(LABELS, dinner);
    expect(entry.version).toBe('2016-06-27');
    const data = entry.data as { LabelModelVersion: string; Labels: Label[] };
    expect(data.LabelModelVersion).toMatch(/centernet/i);
    const names = data.Labels.map((l) => l.Name);
    expect(names).toContain('Person');
    expect(names).toContain('Face');
    const face = data.Labels.find((l) => l.Name === 'Face')!;
    expect(face.Parents).toEqual([{ Name: 'Head' }, { Name: 'Person' }]);
    expect(face.Instances).toHaveLength(1);
    const person = data.Labels.find((l) => l.Name === 'Person')!;
    expect(person.Instances.length).toBeGreaterThanOrEqual(1);
    for (const l of data.Labels) {
      expect(l.Confidence).toBeGreaterThanOrEqual(30);
      expect(l.Confidence).toBeLessThanOrEqual(100);
      for (const i of l.Instances) {
        const b = i.BoundingBox;
        for (const v of [b.Top, b.Left, b.Width, b.Height]) expect(v).toBeGreaterThanOrEqual(0);
        expect(b.Left + b.Width).toBeLessThanOrEqual(1.0001);
        expect(b.Top + b.Height).toBeLessThanOrEqual(1.0001);
      }
    }
    // The face sits inside the person's box (relative coordinates of one image).
    const fb = face.Instances[0]!.BoundingBox;
    expect(person.Instances.some((i) => i.BoundingBox.Left <= fb.Left + 0.02 && i.BoundingBox.Left + i.BoundingBox.Width >= fb.Left + fb.Width - 0.02)).toBe(true);
    // Labels come most confident first.
    const conf = data.Labels.map((l) => l.Confidence);
    expect([...conf].sort((a, b) => b - a)).toEqual(conf);
  });

  it('a kitten is a Cat with its parents; the face BlazeFace sees on it makes no Face or Person', async () => {
    const data = (await runAddon(LABELS, cat)).data as { Labels: Label[] };
    const names = data.Labels.map((l) => l.Name);
    expect(names).toContain('Cat');
    expect(names).toContain('Animal');
    expect(data.Labels.find((l) => l.Name === 'Cat')!.Parents).toEqual([{ Name: 'Pet' }, { Name: 'Animal' }, { Name: 'Mammal' }]);
    for (const wrong of ['Person', 'Face', 'Head', 'Dog']) expect(names).not.toContain(wrong);
  });

  it('refuses a wrong min_confidence, unknown params and a non-image target', async () => {
    const wrong = await s.call('POST', `/addons/${LABELS}/execute/`, json({ target: dinner, params: { min_confidence: 'high' } }));
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('params.min_confidence');
    const unknown = await s.call('POST', `/addons/${LABELS}/execute/`, json({ target: dinner, params: { colour: 1 } }));
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain('params.colour');
    const text = await s.uploadFile('notes.txt', 'hello\n');
    expect((await s.call('POST', `/addons/${LABELS}/execute/`, json({ target: text }))).status).toBe(400);
  });
});

describe('aws_rekognition_detect_moderation_labels', () => {
  it('a portrait is not explicit; min_confidence decides which labels are reported, with their parent', async () => {
    const entry = await runAddon(MODERATION, face);
    expect(entry.version).toBe('2016-06-27');
    const data = entry.data as { ModerationModelVersion: string; ModerationLabels: Moderation[] };
    expect(data.ModerationModelVersion).toMatch(/nsfwjs/);
    expect(data.ModerationLabels).toEqual([]);
    const all = (await runAddon(MODERATION, face, { min_confidence: 0 })).data as { ModerationLabels: Moderation[] };
    expect(all.ModerationLabels.map((l) => [l.Name, l.ParentName]).sort()).toEqual([
      ['Explicit Nudity', ''], ['Illustrated Explicit Nudity', 'Explicit Nudity'], ['Suggestive', ''],
    ]);
    for (const l of all.ModerationLabels) expect(l.Confidence).toBeLessThan(50);
    // A threshold between the scores keeps only those at or above it.
    const sorted = all.ModerationLabels.map((l) => l.Confidence).sort((a, b) => b - a);
    const between = (sorted[0]! + sorted[sorted.length - 1]!) / 2;
    const some = (await runAddon(MODERATION, face, { min_confidence: between })).data as { ModerationLabels: Moderation[] };
    expect(some.ModerationLabels.length).toBeGreaterThan(0);
    expect(some.ModerationLabels.length).toBeLessThan(3);
    for (const l of some.ModerationLabels) expect(l.Confidence).toBeGreaterThanOrEqual(between);
  });
});
