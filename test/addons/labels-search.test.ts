/**
 * What the labels add-on writes, as search and REST v0.6 read it: `aws_rekognition_detect_labels`
 * runs with its real model on a real photo, then `POST /files/search/` finds the file by
 * `appdata_labels` (through file_labels, written with the appdata) and v0.6's `rekognition_info`
 * shows the same labels as name -> confidence. A deleted file leaves live searches.
 */
import fs from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { dinnerPhoto } from '../media/photos.js';

const LABELS = 'aws_rekognition_detect_labels';
const s = useServer();
const json = (body: unknown) => ({ body: JSON.stringify(body), contentType: 'application/json' });

let photo: string;
let other: string;
let labels: Array<{ Name: string; Confidence: number }>;
beforeAll(async () => {
  photo = await s.uploadFile('dinner.jpg', fs.readFileSync(await dinnerPhoto()));
  other = await s.uploadFile('plain.txt', 'no labels here');
  const r = await s.call('POST', `/addons/${LABELS}/execute/`, json({ target: photo }));
  expect(r.status, r.text).toBe(200);
  const end = Date.now() + 150_000;
  for (;;) {
    const st = await s.call('GET', `/addons/${LABELS}/execute/status/?request_id=${r.json.request_id}`);
    if (st.json.status === 'done') break;
    expect(st.json.status, st.text).toBe('in_progress');
    if (Date.now() > end) throw new Error('add-on did not finish');
    await new Promise((res) => setTimeout(res, 250));
  }
  labels = (await s.call('GET', `/files/${photo}/?include=appdata`)).json.appdata[LABELS].data.Labels;
}, 180_000);

const search = async (body: unknown): Promise<string[]> => {
  const r = await s.call('POST', '/files/search/?limit=100', json(body));
  expect(r.status, r.text).toBe(200);
  return r.json.results.map((f: { uuid: string }) => f.uuid);
};

describe('appdata_labels', () => {
  it('finds the file by any label the add-on wrote, and not by a label it did not', async () => {
    expect(labels.map((l) => l.Name)).toContain('Person');
    expect(await search({ appdata_labels: ['Person'] })).toEqual([photo]);
    expect(await search({ appdata_labels: ['Giraffe', labels[labels.length - 1]!.Name] })).toEqual([photo]);
    expect(await search({ appdata_labels: ['Giraffe'] })).toEqual([]);
    // A label is a whole name: part of one matches nothing.
    expect(await search({ appdata_labels: ['Perso'] })).toEqual([]);
    // Case-insensitive, on both databases.
    expect(await search({ appdata_labels: ['pERSON'] })).toEqual([photo]);
    expect(await search({ appdata_labels: ['Person'], is_image: false })).not.toContain(other);
  });
});

describe('rekognition_info (REST v0.6)', () => {
  it('shows the same labels as name -> confidence in 0..1', async () => {
    const r = await s.call('GET', `/files/${photo}/?add_fields=rekognition_info`, { accept: 'application/vnd.uploadcare-v0.6+json' });
    expect(r.status).toBe(200);
    expect(Object.keys(r.json.rekognition_info).sort()).toEqual(labels.map((l) => l.Name).sort());
    for (const l of labels) expect(r.json.rekognition_info[l.Name]).toBeCloseTo(l.Confidence / 100, 4);
  });
});

describe('a deleted file', () => {
  it('is no longer found by its labels among live files, only among removed ones', async () => {
    expect((await s.call('DELETE', `/files/${photo}/storage/`)).status).toBe(200);
    expect(await search({ appdata_labels: ['Person'] })).toEqual([]);
    expect(await search({ appdata_labels: ['Person'], removed: true })).toEqual([photo]);
  });
});
