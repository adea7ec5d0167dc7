/**
 * Reading an add-on's `params`: each helper throws a 400 naming the field (`params.<key>`), so
 * every add-on refuses bad input the same way.
 */
import { addonParamErrors } from '../core/error-catalogue/rest-fields.js';

/** The params object (omitted or null = no params); refuses keys the add-on does not know. */
export function paramsObject(raw: unknown, known: readonly string[]): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw addonParamErrors.notObject();
  const obj = raw as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    if (!known.includes(key)) throw addonParamErrors.unknownKey(key);
  }
  return obj;
}

/** A JSON boolean (or the strings "true"/"false", as form-minded clients send). */
export function boolField(obj: Record<string, unknown>, key: string, fallback: boolean): boolean {
  const v = obj[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 'false') return v === 'true';
  throw addonParamErrors.notBoolean(key);
}

export function stringField(obj: Record<string, unknown>, key: string, fallback: string): string {
  const v = obj[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'string') throw addonParamErrors.notString(key);
  return v;
}

export function enumField<T extends string>(obj: Record<string, unknown>, key: string, allowed: readonly T[], fallback: T): T {
  const v = stringField(obj, key, fallback);
  if (!(allowed as readonly string[]).includes(v)) throw addonParamErrors.notOneOf(key, allowed);
  return v as T;
}

/** `params.min_confidence`: a number 0..100 (percent, as Rekognition's MinConfidence). */
export function confidenceField(p: Record<string, unknown>, fallback: number): number {
  const v = p['min_confidence'];
  if (v === undefined || v === null) return fallback;
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || n > 100) throw addonParamErrors.confidenceOutOfRange();
  return n;
}
