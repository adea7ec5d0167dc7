/**
 * `aws_rekognition_detect_moderation_labels`: nsfwjs' MobileNetV2 classifier (five classes:
 * drawing, hentai, neutral, porn, sexy), shipped inside its npm package and run in the detector
 * worker threads, mapped to Amazon Rekognition's moderation labels: `Explicit Nudity` (porn or
 * hentai), its child `Illustrated Explicit Nudity` (hentai) and `Suggestive` (sexy). The model
 * has no notion of the other categories (Violence, Visually Disturbing, Rude Gestures, Drugs,
 * Tobacco, Alcohol, Gambling, Hate Symbols): they are never reported.
 */
import { nsfwScores } from '../media/detect/analyse.js';
import { NSFW_MODEL, type NsfwScores } from '../media/detect/types.js';
import { confidenceField, paramsObject } from './params.js';
import type { Addon } from './types.js';

export interface ModerationLabel { Confidence: number; Name: string; ParentName: string }
export interface ModerationData { ModerationModelVersion: string; ModerationLabels: ModerationLabel[] }
export interface ModerationParams { min_confidence: number }

/** Rekognition's own default MinConfidence. */
const DEFAULT_MIN_CONFIDENCE = 50;

export const awsRekognitionDetectModerationLabels: Addon<ModerationParams, ModerationData> = {
  name: 'aws_rekognition_detect_moderation_labels',
  version: '2016-06-27',
  accepts: 'image',
  parseParams(raw) {
    const p = paramsObject(raw, ['min_confidence']);
    return { min_confidence: confidenceField(p, DEFAULT_MIN_CONFIDENCE) };
  },
  async run({ file, path, config }, params) {
    const scores = await nsfwScores({ path, mime: file.mimeType }, config.detectTimeoutMs);
    return { data: moderationOf(scores, params.min_confidence) };
  },
};

const pct = (score: number): number => Math.round(score * 100_000) / 1000;

export function moderationOf(s: NsfwScores, minConfidence: number): ModerationData {
  const labels: ModerationLabel[] = [
    { Name: 'Explicit Nudity', ParentName: '', Confidence: pct(Math.max(s.porn, s.hentai)) },
    { Name: 'Illustrated Explicit Nudity', ParentName: 'Explicit Nudity', Confidence: pct(s.hentai) },
    { Name: 'Suggestive', ParentName: '', Confidence: pct(s.sexy) },
  ];
  return {
    ModerationModelVersion: NSFW_MODEL,
    ModerationLabels: labels.filter((l) => l.Confidence >= minConfidence).sort((a, b) => b.Confidence - a.Confidence),
  };
}
