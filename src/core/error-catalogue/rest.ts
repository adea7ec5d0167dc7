/**
 * The REST API's errors. REST renders only the status and `{"detail": message}` (a BodyError its
 * own object): the code is for logs and tests, so one not-found serves every REST resource.
 */
import { BodyError } from '../errors.js';
import { fixed, worded } from './define.js';

export const restErrors = {
  /** Every missing REST resource: an unknown file, group, webhook, add-on request, project or key. */
  notFound: fixed(404, 'NotFound', 'Not found.'),
  /**
   * The REST seam's answer to a route schema's own message (src/http/rest/route.ts, its only
   * caller). A field check throws its entry in rest-fields.ts instead.
   */
  invalid: worded(400, 'BadRequest', (detail: string) => detail),
  /** `{"field": ["message", …]}`: every bad field at once, as the management API answers them. */
  fieldErrors: (body: Readonly<Record<string, unknown>>) => new BodyError(400, 'BadRequest', body),
  /** A required webhook field that is absent: answered alone, before the field errors. */
  missingField: worded(400, 'MissingField', (name: string) => `\`${name}\` is missing.`),
  notAcceptable: fixed(406, 'NotAcceptable', 'Incorrect Accept header provided. Make sure to specify API version. Refer to REST API docs for details.'),
  credentialsMissing: fixed(401, 'Unauthorized', 'Authentication credentials were not provided.'),
  credentialsIncorrect: fixed(401, 'Unauthorized', 'Incorrect authentication credentials.'),
  publicKeyNotFound: worded(401, 'Unauthorized', (pubKey: string) => `Public key ${pubKey} not found.`),
  secretKeyNotFound: fixed(401, 'Unauthorized', 'Secret key not found.'),
  signatureInvalid: fixed(401, 'Unauthorized', 'Invalid signature. Please check your Secret key.'),
  simpleAuthOverHttp: fixed(400, 'SimpleAuthOverHttp', 'Simple authentication over HTTP is forbidden. Please, use HTTPS or signed requests instead.'),
  throttled: worded(
    429,
    'Throttled',
    (retryAfterS: number) => `Request was throttled. Expected available in ${retryAfterS} seconds.`,
    (retryAfterS: number) => ({ 'retry-after': String(retryAfterS) }),
  ),

  // Files
  batchNotList: fixed(400, 'BadRequest', 'Expected list of UUIDs'),
  batchEmpty: fixed(400, 'BadRequest', 'List of UUIDs can not be empty'),
  batchTooLong: worded(400, 'BadRequest', (max: number) => `Maximum UUIDs per request is exceeded. The limit is ${max}`),
  tagsRequired: fixed(400, 'BadRequest', '`tags` is required: an array of strings (empty clears).'),
  tooManyTags: worded(400, 'BadRequest', (max: number) => `\`tags\` accepts at most ${max} tags.`),
  metadataValueNotString: fixed(400, 'BadRequest', 'Metadata value must be a JSON string.'),
  removedNotStorable: fixed(400, 'FileRemoved', 'File is removed and can not be stored.'),
  removedMetadataFixed: fixed(400, 'FileRemoved', 'File is removed; its metadata can not be changed.'),
  removedTagsFixed: fixed(400, 'FileRemoved', 'File is removed; its tags can not be changed.'),

  // Groups
  groupConflict: fixed(409, 'GroupConflict', 'already exists here in another project or with another file count'),
  archiveFileRemoved: fixed(404, 'GroupFileRemoved', 'A file of this group was removed; the archive is not available.'),
  archiveTooLarge: worded(
    400,
    'ArchiveTooLarge',
    (total: number, max: number) => `The group holds ${total} bytes; archives are limited to ${max} bytes of uncompressed data.`,
  ),

  // Webhooks, add-ons, conversions
  requestIdRequired: fixed(400, 'BadRequest', '`request_id` is required.'),
  beforeNotDeliveryId: fixed(400, 'BadRequest', '`before` must be a delivery id.'),
  targetRequired: fixed(400, 'BadRequest', '`target` is required.'),
  targetNotString: fixed(400, 'BadRequest', '`target` must be a file UUID string.'),
  targetNotUuid: fixed(400, 'BadRequest', '`target` is not a valid file UUID.'),
  concurrentCall: fixed(409, 'ConcurrentCall', 'Concurrent call attempted'),
  notAnImage: fixed(400, 'NotAnImage', 'Not supported for files that are not images.'),
  notConvertible: worded(400, 'BadRequest', (mime: string) => `The file is not a document this server converts (${mime}).`),

  // Remote copies
  copyPatternInvalid: worded(400, 'BadRequest', (pattern: string) => `Invalid pattern provided: \`${pattern}\``),
  copyNoSuchStorage: fixed(400, 'BadRequest', 'Project has no storage with provided name.'),
  copyTooLarge: fixed(400, 'BadRequest', 'Copying of large files is not supported at the moment.'),
  copyEndpointRefused: fixed(400, 'BadRequest', 'The storage endpoint resolves to an address outside the outbound policy (see STOWAGE_OUTBOUND_ALLOW).'),
  copyStorageWriteFailed: worded(502, 'StorageError', (reason: string) => `Could not write to the storage: ${reason}.`),
};
