/**
 * Errors of a file's metadata and tags, wherever they are set (Upload API fields, REST, copies).
 * The codes are the Upload API's (wire-reference §1.2); REST shows only the message.
 */
import { fixed, worded } from './define.js';

export const metadataErrors = {
  keyEmpty: fixed(400, 'FileMetadataKeyEmptyError', "File's metadata key can not be empty."),
  keyTooLong: worded(400, 'FileMetadataKeyLengthTooBigError', (key: string, max: number) => `Length of file metadata key \`${key}\` can not be more than ${max} symbols.`),
  keyForbidden: worded(400, 'FileMetadataKeyForbiddenError', (key: string) => `File's metadata key \`${key}\` contains symbols not allowed by the metadata key format.`),
  keyDuplicated: worded(400, 'FileMetadataKeyDuplicatedError', (key: string) => `File's metadata key \`${key}\` has a duplicate.`),
  valueNotString: worded(400, 'FileMetadataValueForbiddenError', (key: string) => `Value of file metadata key \`${key}\` must be a string.`),
  valueEmpty: worded(400, 'FileMetadataValueEmptyError', (key: string) => `Value of the file metadata key \`${key}\` can not be empty.`),
  valueTooLong: worded(
    400,
    'FileMetadataValueLengthTooBigError',
    (key: string, max: number) => `Value of file metadata's key \`${key}\` can not be more than ${max} symbols in length.`,
  ),
  valueForbidden: worded(400, 'FileMetadataValueForbiddenError', (key: string) => `Value of file metadata key \`${key}\` contains symbols not allowed by the metadata value format.`),
  tooManyKeys: worded(400, 'FileMetadataKeysNumberTooBigError', (max: number) => `A file can not have more than ${max} metadata keys.`),
};

/** Tag errors; the message names the tag or the field at fault. */
export const tagErrors = {
  invalid: worded(400, 'FileTagsInvalidError', (message: string) => message),
};
