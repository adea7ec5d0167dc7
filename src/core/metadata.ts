/** File metadata rules (spec Limits): keys [A-Za-z0-9_\-.:], 1..64; values 1..512; at most 50 keys. */
import { AppError } from './errors.js';

export const METADATA_MAX_KEYS = 50;
export const METADATA_MAX_KEY_LENGTH = 64;
export const METADATA_MAX_VALUE_LENGTH = 512;
const KEY_CHARS = /^[A-Za-z0-9_\-.:]+$/;
// Control characters have no business in a metadata value and break some consumers.
// eslint-disable-next-line no-control-regex
const FORBIDDEN_VALUE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

const bad = (code: string, message: string) => new AppError(400, code, message);

export function validateMetadataKey(key: string): void {
  if (key.length === 0) throw bad('FileMetadataKeyEmptyError', "File's metadata key can not be empty.");
  if (key.length > METADATA_MAX_KEY_LENGTH)
    throw bad('FileMetadataKeyLengthTooBigError', `Length of file metadata key \`${key}\` can not be more than ${METADATA_MAX_KEY_LENGTH} symbols.`);
  if (!KEY_CHARS.test(key))
    throw bad('FileMetadataKeyForbiddenError', `File's metadata key \`${key}\` contains symbols not allowed by the metadata key format.`);
}

export function validateMetadataValue(key: string, value: unknown): string {
  if (typeof value !== 'string') throw bad('FileMetadataValueForbiddenError', `Value of file metadata key \`${key}\` must be a string.`);
  if (value.length === 0) throw bad('FileMetadataValueEmptyError', `Value of the file metadata key \`${key}\` can not be empty.`);
  if ([...value].length > METADATA_MAX_VALUE_LENGTH)
    throw bad('FileMetadataValueLengthTooBigError', `Value of file metadata's key \`${key}\` can not be more than ${METADATA_MAX_VALUE_LENGTH} symbols in length.`);
  if (FORBIDDEN_VALUE.test(value))
    throw bad('FileMetadataValueForbiddenError', `Value of file metadata key \`${key}\` contains symbols not allowed by the metadata value format.`);
  return value;
}

export function validateKeyCount(count: number): void {
  if (count > METADATA_MAX_KEYS) throw bad('FileMetadataKeysNumberTooBigError', `A file can not have more than ${METADATA_MAX_KEYS} metadata keys.`);
}

/** Validates a whole metadata map (upload `metadata[key]` fields, copies). */
export function validateMetadata(entries: Array<[string, unknown]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of entries) {
    validateMetadataKey(key);
    if (Object.prototype.hasOwnProperty.call(out, key)) throw bad('FileMetadataKeyDuplicatedError', `File's metadata key \`${key}\` has a duplicate.`);
    out[key] = validateMetadataValue(key, value);
  }
  validateKeyCount(Object.keys(out).length);
  return out;
}
