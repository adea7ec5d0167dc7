/**
 * The tus surface's errors (docs/tus.md), rendered like the Upload API's. The protocol's
 * constants (version, chunk content type, checksum algorithms) live with the protocol in
 * `tus/protocol.ts`, which binds them.
 */
import { fixed, worded } from './define.js';

export const tusCatalogue = {
  version: worded(412, 'TusVersionUnsupportedError', (version: string) => `Tus-Resumable ${version} is required.`, (version: string) => ({ 'tus-version': version })),
  notFound: fixed(404, 'TusUploadNotFoundError', 'Upload not found.'),
  /** The file a finished upload made is gone (removed since). */
  fileNotFound: fixed(404, 'FileNotFoundError', 'File not found.'),
  expired: fixed(410, 'TusUploadExpiredError', 'Upload expired.'),
  offset: worded(409, 'TusOffsetMismatchError', (expected: number) => `Upload-Offset does not match the upload's offset (${expected}).`),
  contentType: worded(415, 'TusContentTypeError', (contentType: string) => `Content-Type must be ${contentType}.`),
  lengthRequired: fixed(400, 'TusUploadLengthRequiredError', 'Upload-Length is required (Upload-Defer-Length is not supported).'),
  badHeader: worded(400, 'TusHeaderInvalidError', (name: string) => `${name} is invalid.`),
  tooLarge: fixed(413, 'TusUploadTooLargeError', 'The upload is larger than the size limit (Tus-Max-Size).'),
  pastLength: fixed(413, 'TusUploadTooLargeError', "The chunk goes past the upload's Upload-Length."),
  projectLimit: fixed(413, 'TusProjectLimitExceededError', "The project's unfinished tus uploads would exceed their total size limit."),
  clientLimit: fixed(
    413,
    'TusClientLimitExceededError',
    'Your unfinished tus uploads to this project would exceed the total size one client may reserve: finish or terminate some first.',
  ),
  checksumAlgorithm: worded(400, 'TusChecksumAlgorithmUnsupportedError', (algorithms: readonly string[]) => `Upload-Checksum algorithm must be one of ${algorithms.join(', ')}.`),
  checksumMismatch: fixed(460, 'TusChecksumMismatchError', 'Checksum mismatch: the chunk was discarded.'),
  locked: fixed(423, 'TusUploadLockedError', 'Another request is writing this upload. Try again later.', { 'retry-after': '1' }),
  incomplete: fixed(409, 'TusUploadIncompleteError', 'The upload is not complete yet.'),
};
