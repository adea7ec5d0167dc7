/**
 * What the labels add-on reports on a labelled set of real photos (labelled-photos.ts), with the
 * real models in the detector threads and the photos decoded by sharp as for a stored file:
 * precision and recall over the set (the figures docs/detection.md states), and the cases that
 * must hold photo by photo: a cat is a Cat (an Animal), never a Person or a Face.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findObjectsAndFaces, type ImageFindings } from '../../src/media/detect/analyse.js';
import { closeDetectPool } from '../../src/media/detect/pool.js';
import { labelsOf, type LabelsData } from '../../src/addons/aws-rekognition-detect-labels.js';
import { LABELLED_PHOTOS } from './labelled-photos.js';

/** The add-on's default floor. */
const MIN_CONFIDENCE = Number(process.env['LABELS_MIN_CONFIDENCE'] ?? 40);

const findings: ImageFindings[] = [];
beforeAll(async () => {
  for (const [i, p] of LABELLED_PHOTOS.entries()) {
    findings.push(await findObjectsAndFaces({ path: await p.file(), mime: 'image/jpeg' }, `labelled-${i}`, 120_000));
  }
}, 300_000);
afterAll(() => closeDetectPool());

const labelsFor = (i: number): LabelsData => labelsOf(findings[i]!, MIN_CONFIDENCE);

/** Labels found as things (with instances), not only named as a parent. */
const leaves = (data: LabelsData): string[] => data.Labels.filter((l) => l.Instances.length > 0).map((l) => l.Name);

describe('labels on the labelled photo set', () => {
  it('a cat is a Cat and an Animal, and neither a Person nor a Face', async () => {
    const cats = LABELLED_PHOTOS.map((p, i) => ({ p, i })).filter(({ p }) => p.expected.includes('Cat'));
    expect(cats.length).toBeGreaterThanOrEqual(3);
    for (const { p, i } of cats) {
      const names = labelsFor(i).Labels.map((l) => l.Name);
      expect(names, p.name).toContain('Cat');
      expect(names, p.name).toContain('Animal');
      expect(names, p.name).not.toContain('Person');
      expect(names, p.name).not.toContain('Face');
      expect(names, p.name).not.toContain('Dog');
    }
  });

  it('precision and recall over the set', async () => {
    let reported = 0, correct = 0, expected = 0, found = 0;
    const lines: string[] = [];
    for (const [i, p] of LABELLED_PHOTOS.entries()) {
      const data = labelsFor(i);
      const got = leaves(data);
      const ok = got.filter((n) => p.expected.includes(n) || p.allowed.includes(n));
      // Found: reported by name, as a thing or as the parent of one (a face's Person).
      const hits = p.expected.filter((n) => data.Labels.some((l) => l.Name === n));
      reported += got.length; correct += ok.length; expected += p.expected.length; found += hits.length;
      lines.push(`${p.name}: ${got.join(', ') || '-'}${got.length > ok.length ? `  (wrong: ${got.filter((n) => !ok.includes(n)).join(', ')})` : ''}`);
    }
    const precision = correct / reported;
    const recall = found / expected;
    console.log(`labels on ${LABELLED_PHOTOS.length} photos: precision ${correct}/${reported} = ${precision.toFixed(2)}, recall ${found}/${expected} = ${recall.toFixed(2)}\n  ${lines.join('\n  ')}`);
    // The figures docs/detection.md states, as floors.
    expect(recall).toBeGreaterThanOrEqual(1);
    expect(precision).toBeGreaterThanOrEqual(0.85);
  });
});
