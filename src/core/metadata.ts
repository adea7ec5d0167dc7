/** File metadata rules (spec Limits): keys [A-Za-z0-9_\-.:], 1..64; values 1..512; at most 50 keys. */
import { metadataErrors } from './error-catalogue/fields.js';

export const METADATA_MAX_KEYS = 50;
export const METADATA_MAX_KEY_LENGTH = 64;
export const METADATA_MAX_VALUE_LENGTH = 512;
const KEY_CHARS = /^[A-Za-z0-9_\-.:]+$/;
// Control characters have no business in a metadata value and break some consumers.
// eslint-disable-next-line no-control-regex
const FORBIDDEN_VALUE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;


export function validateMetadataKey(key: string): void {
  if (key.length === 0) throw metadataErrors.keyEmpty();
  if (key.length > METADATA_MAX_KEY_LENGTH)
    throw metadataErrors.keyTooLong(key, METADATA_MAX_KEY_LENGTH);
  if (!KEY_CHARS.test(key))
    throw metadataErrors.keyForbidden(key);
}

export function validateMetadataValue(key: string, value: unknown): string {
  if (typeof value !== 'string') throw metadataErrors.valueNotString(key);
  if (value.length === 0) throw metadataErrors.valueEmpty(key);
  if ([...value].length > METADATA_MAX_VALUE_LENGTH)
    throw metadataErrors.valueTooLong(key, METADATA_MAX_VALUE_LENGTH);
  if (FORBIDDEN_VALUE.test(value))
    throw metadataErrors.valueForbidden(key);
  return value;
}

export function validateKeyCount(count: number): void {
  if (count > METADATA_MAX_KEYS) throw metadataErrors.tooManyKeys(METADATA_MAX_KEYS);
}

/** Validates a whole metadata map (upload `metadata[key]` fields, copies). */
export function validateMetadata(entries: Array<[string, unknown]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of entries) {
    validateMetadataKey(key);
    if (Object.prototype.hasOwnProperty.call(out, key)) throw metadataErrors.keyDuplicated(key);
    out[key] = validateMetadataValue(key, value);
  }
  validateKeyCount(Object.keys(out).length);
  return out;
}
