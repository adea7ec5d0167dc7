/**
 * `aws_rekognition_detect_labels`: objects (CenterNet, 80 COCO classes) and faces (BlazeFace)
 * found by the models shipped in @vladmandic/human, run in the detector worker threads
 * (media/detect/), answered in Amazon Rekognition's DetectLabels shape: labels with confidence
 * (0..100), instances with relative bounding boxes, parents (also listed as labels, as
 * Rekognition does), and the model in `LabelModelVersion`. A face is reported only inside a
 * person the object model found: BlazeFace alone also "finds" faces on cats and pills.
 */
import { backedFaces, findObjectsAndFaces, type ImageFindings } from '../media/detect/analyse.js';
import { OBJECT_MODEL } from '../media/detect/types.js';
import { confidenceField, paramsObject } from './params.js';
import { FACE, rekognitionEntry } from './rekognition-taxonomy.js';
import type { Addon } from './types.js';

export interface RekognitionBox { Width: number; Height: number; Left: number; Top: number }
export interface RekognitionLabel {
  Name: string;
  Confidence: number;
  Instances: { BoundingBox: RekognitionBox; Confidence: number }[];
  Parents: { Name: string }[];
}
export interface LabelsData { LabelModelVersion: string; Labels: RekognitionLabel[] }
export interface LabelsParams { min_confidence: number }

/**
 * CenterNet's scores run lower than Rekognition's: 40 is the floor that measured best on the
 * labelled photos of the tests (docs/detection.md).
 */
const DEFAULT_MIN_CONFIDENCE = 40;

export const awsRekognitionDetectLabels: Addon<LabelsParams, LabelsData> = {
  name: 'aws_rekognition_detect_labels',
  version: '2016-06-27',
  accepts: 'image',
  parseParams(raw) {
    const p = paramsObject(raw, ['min_confidence']);
    return { min_confidence: confidenceField(p, DEFAULT_MIN_CONFIDENCE) };
  },
  async run({ file, path, config }, params) {
    const found = await findObjectsAndFaces({ path, mime: file.mimeType }, file.uuid, config.detectTimeoutMs);
    return { data: labelsOf(found, params.min_confidence) };
  },
};

const pct = (score: number): number => Math.round(score * 100_000) / 1000;
const rel = (v: number): number => Math.round(v * 10_000) / 10_000;

export function labelsOf(found: ImageFindings, minConfidence: number): LabelsData {
  const labels = new Map<string, RekognitionLabel>();
  const add = (name: string, parents: readonly string[], confidence: number, box: RekognitionBox | null): void => {
    let label = labels.get(name);
    if (!label) {
      label = { Name: name, Confidence: confidence, Instances: [], Parents: parents.map((n) => ({ Name: n })) };
      labels.set(name, label);
    }
    label.Confidence = Math.max(label.Confidence, confidence);
    if (box) label.Instances.push({ BoundingBox: box, Confidence: confidence });
  };
  const hits = [
    ...found.objects.map((d) => ({ d, entry: rekognitionEntry(d.label) })),
    ...backedFaces(found).map((d) => ({ d, entry: FACE })),
  ];
  for (const { d, entry } of hits) {
    const confidence = pct(d.score);
    if (confidence < minConfidence) continue;
    const box = { Width: rel(d.width / found.width), Height: rel(d.height / found.height), Left: rel(d.x / found.width), Top: rel(d.y / found.height) };
    add(entry.name, entry.parents, confidence, box);
    // Each parent is a label of its own, as confident as its best child, without instances.
    for (const parent of entry.parents) add(parent, [], confidence, null);
  }
  const out = [...labels.values()].sort((a, b) => b.Confidence - a.Confidence || a.Name.localeCompare(b.Name));
  for (const l of out) l.Instances.sort((a, b) => b.Confidence - a.Confidence);
  return { LabelModelVersion: OBJECT_MODEL, Labels: out };
}
