/**
 * remove_bg params (wire-reference §2.11), parsed into what the child process applies. Lengths are
 * pixels or percentages; positions and scales are fractions.
 */
import { addonParamErrors } from '../../core/error-catalogue/rest-fields.js';
import { boolField, enumField, paramsObject, stringField } from '../params.js';
import type { TypeLevel } from './foreground.js';

export type Length = { px: number } | { fraction: number };

export interface RemoveBgParams {
  crop: boolean;
  /** Around the cropped subject: pixels, or a fraction of the subject's size. */
  cropMargin: Length;
  /** The subject's size as a fraction of the canvas (fit inside), or null to keep it. */
  scale: number | null;
  /** Where the subject sits (0 = left/top edge, 1 = right/bottom edge), or null to keep it. */
  position: { x: number; y: number } | null;
  addShadow: boolean;
  type: 'auto' | 'person' | 'product' | 'car';
  /** `none`: `foreground_type` echoes `type`; else the detected class at that level (foreground.ts). */
  typeLevel: 'none' | TypeLevel;
  semitransparency: boolean;
  channels: 'rgba' | 'alpha';
  /** Region of interest: outside it nothing is foreground. */
  roi: { x1: Length; y1: Length; x2: Length; y2: Length } | null;
}

const KNOWN = ['crop', 'crop_margin', 'scale', 'add_shadow', 'type_level', 'type', 'semitransparency', 'channels', 'roi', 'position'] as const;

const PERCENT = /^(\d{1,3}(?:\.\d+)?)%$/;
const PIXELS = /^(\d{1,6})(?:px)?$/;

function length(text: string, key: string): Length {
  const pct = PERCENT.exec(text);
  if (pct) {
    const v = Number(pct[1]);
    if (v > 100) throw addonParamErrors.percentOver100(key);
    return { fraction: v / 100 };
  }
  const px = PIXELS.exec(text);
  if (px) return { px: Number(px[1]) };
  throw addonParamErrors.notLength(key, text);
}

function percent(text: string, key: string): number {
  const m = PERCENT.exec(text.trim());
  if (!m || Number(m[1]) > 100) throw addonParamErrors.notPercentage(key, text);
  return Number(m[1]) / 100;
}

export function parseRemoveBgParams(raw: unknown): RemoveBgParams {
  const p = paramsObject(raw, KNOWN);
  // The public API's values are strings; a client that sends the numbers 1 and 2 means the same.
  const rawLevel = p['type_level'];
  const typeLevel = enumField(typeof rawLevel === 'number' ? { type_level: String(rawLevel) } : p, 'type_level', ['none', '1', '2', 'latest'], 'none');
  const scaleText = stringField(p, 'scale', 'original');
  let scale: number | null = null;
  if (scaleText !== 'original') {
    scale = percent(scaleText, 'scale');
    if (scale < 0.1) throw addonParamErrors.scaleOutOfRange();
  }
  const positionText = stringField(p, 'position', 'original').trim();
  let position: RemoveBgParams['position'] = null;
  if (positionText === 'center') position = { x: 0.5, y: 0.5 };
  else if (positionText !== 'original') {
    const parts = positionText.split(/\s+/);
    if (parts.length > 2) throw addonParamErrors.positionInvalid();
    const x = percent(parts[0]!, 'position');
    position = { x, y: parts[1] === undefined ? x : percent(parts[1], 'position') };
  }
  // A scaled subject is centred unless a position is given (as the public service does).
  if (scale !== null && position === null) position = { x: 0.5, y: 0.5 };
  const roiText = stringField(p, 'roi', '').trim();
  let roi: RemoveBgParams['roi'] = null;
  if (roiText) {
    const parts = roiText.split(/\s+/);
    if (parts.length !== 4) throw addonParamErrors.roiInvalid();
    const [x1, y1, x2, y2] = parts.map((t) => length(t, 'roi')) as [Length, Length, Length, Length];
    roi = { x1, y1, x2, y2 };
  }
  return {
    crop: boolField(p, 'crop', false),
    cropMargin: length(stringField(p, 'crop_margin', '0'), 'crop_margin'),
    scale,
    position,
    addShadow: boolField(p, 'add_shadow', false),
    type: enumField(p, 'type', ['auto', 'person', 'product', 'car'], 'auto'),
    typeLevel,
    semitransparency: boolField(p, 'semitransparency', true),
    channels: enumField(p, 'channels', ['rgba', 'alpha'], 'rgba'),
    roi,
  };
}
