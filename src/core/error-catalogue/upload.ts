/**
 * The Upload API's errors (wire-reference §1.2). Unlike REST, the Upload API shows the code on the
 * wire (`error_code` with `jsonerrors=1`), so codes and messages here are the hosted service's
 * own, spelling mistakes included ("RequestFiledsNumberLimitExceededError"), and a not-found keeps
 * the code of the thing that was not found: the SDKs branch on these codes.
 */
import { AppError } from '../errors.js';
import { fixed, worded } from './define.js';

export const uploadErrors = {
  /** An unknown Upload API path. */
  notFound: fixed(404, 'NotFound', 'Not found.'),
  internal: fixed(500, 'UploadAPIError', 'Internal error.'),
  /** A 4xx Fastify raised before a route ran (e.g. an unsupported media type): its status, our words. */
  requestFailed: (status: number) => new AppError(status, 'BaseViewsError', 'Request processing failed.'),
  /** The Upload seam's answer to a route schema's own message (src/http/upload/route.ts, its only caller). */
  invalid: worded(400, 'BaseViewsError', (message: string) => message),
  requestProcessingFailed: fixed(400, 'UploadViewsError', 'Upload request processing failed.'),
  storeInvalid: fixed(400, 'UploadViewsError', 'store should be 0, 1 or auto.'),
  requestTooLarge: fixed(413, 'RequestSizeLimitExceededError', 'The size of the request is too large.'),
  throttled: worded(
    429,
    'RequestThrottledError',
    (_retryAfterS: number) => 'Request was throttled.',
    (retryAfterS: number) => ({ 'retry-after': String(retryAfterS) }),
  ),
  nullCharacters: fixed(400, 'NullCharactersForbiddenError', 'Null characters are not allowed.'),
  paramRequired: worded(400, 'RequestParamRequiredError', (name: string) => `${name} is required.`),

  // Credentials
  publicKeyRequired: worded(403, 'ProjectPublicKeyRequiredError', (name: string) => `${name} is required.`),
  publicKeyRequiredBeforeFile: worded(
    403,
    'ProjectPublicKeyRequiredError',
    (name: string) => `${name} is required before the file: too many file bytes arrived without a valid public key.`,
  ),
  publicKeyInvalid: worded(403, 'ProjectPublicKeyInvalidError', (name: string) => `${name} is invalid.`),
  scopeForbidden: worded(403, 'ScopeForbiddenError', (path: string) => `Token scope does not include the required path ${path}.`),
  tokenExpired: fixed(401, 'AccessTokenExpiredError', 'Access token has expired.'),
  tokenInvalid: worded(401, 'AccessTokenInvalidError', (reason: string) => `Invalid access token: ${reason}.`),
  tokenOperationsSpent: fixed(403, 'OperationsLimitExceededError', 'The token has spent all its operations.'),
  signatureRequired: fixed(400, 'SignatureRequiredError', '`signature` is required.'),
  expireRequired: fixed(400, 'SignatureExpirationRequiredError', '`expire` is required.'),
  expireInvalid: fixed(400, 'SignatureExpirationInvalidError', '`expire` must be a UNIX timestamp.'),
  signatureExpired: fixed(403, 'SignatureExpirationError', 'Expired signature.'),
  signatureInvalid: fixed(403, 'SignatureInvalidError', 'Invalid signature.'),
  partSignatureInvalid: fixed(403, 'SignatureInvalidError', 'Invalid or expired part URL signature.'),

  // /base/ and the multipart body
  filesRequired: fixed(400, 'FilesRequiredError', 'Request does not contain files.'),
  fileTooLarge: fixed(400, 'FileSizeLimitExceededError', 'File is too large.'),
  tooManyFiles: fixed(400, 'RequestFileNumberLimitExceededError', 'The request contains too many files.'),
  tooManyFields: fixed(400, 'RequestFiledsNumberLimitExceededError', 'The request contains too many HTTP POST fields.'),
  bodyUnparsable: fixed(400, 'PostRequestParserFailedError', 'HTTP POST request parsing failed.'),

  // /info/
  fileIdRequired: fixed(400, 'FileIdRequiredError', 'file_id is required.'),
  fileIdInvalid: fixed(400, 'FileIdInvalidError', 'file_id is invalid.'),
  /** /info/'s own wording, "is not found", as the hosted service answers it. */
  fileNotFound: fixed(404, 'FileNotFoundError', 'File is not found.'),

  // /from_url/
  sourceUrlRequired: fixed(400, 'SourceURLRequiredError', 'source_url is required.'),
  tokenRequired: fixed(400, 'TokenRequiredError', 'token is required.'),

  // /multipart/
  multipartSizeInvalid: fixed(400, 'MultipartSizeInvalidError', 'size should be integer.'),
  multipartFileTooSmall: worded(
    400,
    'MultipartFileSizeTooSmallError',
    (min: number) => `File size can not be less than ${min} bytes. Please use direct upload instead of multipart.`,
  ),
  multipartFileTooLarge: fixed(400, 'MultipartFileSizeLimitExceededError', 'File size exceeds project limit.'),
  partSizeInvalid: fixed(400, 'MultipartPartSizeInvalidError', 'Multipart Upload Part Size should be an integer.'),
  partSizeTooSmall: worded(400, 'MultipartPartSizeTooSmallError', (min: number) => `Multipart Upload Part Size can not be less than ${min} bytes.`),
  partSizeTooBig: worded(400, 'MultipartPartSizeTooBigError', (max: number) => `Multipart Upload Part Size can not be more than ${max} bytes.`),
  multipartIdRequired: fixed(400, 'MultipartFileIdRequiredError', 'uuid is required.'),
  multipartIdInvalid: fixed(400, 'UUIDInvalidError', 'uuid is invalid.'),
  multipartNotFound: fixed(404, 'MultipartFileNotFoundError', 'File is not found.'),
  multipartTooSmall: fixed(400, 'MultipartUploadSizeTooSmallError', 'File size mismatch. Not all parts uploaded?'),
  multipartTooLarge: fixed(400, 'MultipartUploadSizeTooLargeError', 'Uploaded size is more than expected.'),
  multipartWrongParts: fixed(400, 'MultipartFileCompletionFailedError', 'Can not complete upload. Wrong parts size?'),
  multipartAlreadyUploaded: fixed(400, 'MultipartFileAlreadyUploadedError', 'File is already uploaded.'),
  multipartCompletionInProgress: worded(
    503,
    'MultipartFileCompletionInProgressError',
    (_retryAfterS: number) => 'File is being assembled by another request. Try again later.',
    (retryAfterS: number) => ({ 'retry-after': String(Math.max(1, retryAfterS)) }),
  ),

  // /group/
  groupIdRequired: fixed(400, 'GroupIdRequiredError', 'group_id is required.'),
  groupFilesNotFound: fixed(400, 'GroupFilesNotFoundError', 'Some files not found.'),
  groupNotFound: fixed(404, 'GroupNotFoundError', 'group_id is invalid.'),
  groupFilesMissing: fixed(400, 'GroupFilesInvalidError', 'No files[N] parameters found.'),
  groupTooManyFiles: fixed(400, 'FilesNumberLimitExceededError', 'There are too many files.'),
  groupFileUrlInvalid: worded(400, 'GroupFileURLParsingFailedError', (ref: string) => `This is not valid file url: ${ref}.`),
};
