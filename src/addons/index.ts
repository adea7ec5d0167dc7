/**
 * The add-on table: every add-on this node offers. Adding one = a module in this folder exporting
 * an `Addon` (./types.ts) and one line here; the REST routes answer 404 for a name not listed.
 */
import type { Addon } from './types.js';
import { clamavVirusScan } from './clamav-virus-scan.js';
import { awsRekognitionDetectLabels } from './aws-rekognition-detect-labels.js';
import { awsRekognitionDetectModerationLabels } from './aws-rekognition-detect-moderation-labels.js';
import { removeBg } from './remove-bg.js';

export const ADDONS: readonly Addon[] = [
  clamavVirusScan,
  awsRekognitionDetectLabels,
  awsRekognitionDetectModerationLabels,
  removeBg,
];

const BY_NAME = new Map(ADDONS.map((a) => [a.name, a]));

export function findAddon(name: string): Addon | undefined {
  return BY_NAME.get(name);
}

export const addonNames = (): string[] => ADDONS.map((a) => a.name);
