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
  notString: fixed(400, 'FileTagsInvalidError', 'Each tag must be a string.'),
  empty: fixed(400, 'FileTagsInvalidError', 'A tag can not be empty.'),
  tooLong: worded(400, 'FileTagsInvalidError', (tag: string, max: number) => `A tag can not be longer than ${max} characters: \`${tag.slice(0, 80)}\`.`),
  forbidden: worded(400, 'FileTagsInvalidError', (tag: string) => `Tag \`${tag}\` contains a comma or a control character.`),
  notList: worded(400, 'FileTagsInvalidError', (field: string) => `\`${field}\` must be an array of strings.`),
  tooMany: worded(400, 'FileTagsInvalidError', (max: number) => `A file can not have more than ${max} tags.`),
};
