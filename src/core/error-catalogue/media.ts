/**
 * The CDN's and the image pipeline's errors. The CDN renders only the status and the message (its
 * own text body), so the codes sort errors for logs and metrics (`ProcessingTimeout` is counted).
 */
import { fixed, worded } from './define.js';

/** A message as the check words it (decoders, sanitisers and tools report their own reason). */
const said = (message: string) => message;

export const cdnErrors = {
  /** A CDN path that names nothing; the wording tells which part did not match. */
  notFound: fixed(404, 'NotFound', 'Not found.'),
  fileNotFound: fixed(404, 'NotFound', 'File not found.'),
  groupNotFound: fixed(404, 'NotFound', 'Group not found.'),
  noGroupIndex: fixed(404, 'NotFound', 'No file with this index in the group.'),
  notConverted: fixed(404, 'NotFound', 'Not converted: convert the file with POST /convert/…/ and wait for the job to finish.'),
  /** A URL (CDN path or conversion path) that does not parse. */
  invalidUrl: worded(400, 'InvalidUrl', said),
  methodNotAllowed: fixed(405, 'MethodNotAllowed', 'Only GET and HEAD are supported.', { allow: 'GET, HEAD, OPTIONS' }),
  rangeNotSatisfiable: worded(416, 'RangeNotSatisfiable', (_length: number) => 'Requested range not satisfiable.', (length: number) => ({ 'content-range': `bytes */${length}` })),
  internal: fixed(500, 'InternalError', 'Internal error.'),
  tokenInvalid: worded(403, 'CdnTokenInvalid', said, () => ({ 'cache-control': 'no-store' })),
};

export const imageErrors = {
  notAnImage: fixed(400, 'NotAnImage', 'Not supported for files that are not images.'),
  noDimensions: fixed(400, 'InvalidImage', 'Not supported for files that are not images: no image dimensions found.'),
  /** The image cannot be decoded, sanitised or converted; the message says why. */
  invalid: worded(400, 'InvalidImage', said),
  /** Too many pixels, bytes, frames or elements to process; the message names the limit. */
  tooLarge: worded(400, 'ImageTooLarge', said),
  inputTooLarge: worded(400, 'ImageTooLarge', (max: number) => `Input file is larger than ${max} bytes.`),
  outputTooLarge: worded(400, 'OutputTooLarge', said),
  unknownOperation: worded(400, 'UnknownOperation', (name: string) => `Unknown operation "${name}".`),
  /** An operation with bad arguments, or a chain that is not one. */
  invalidOperation: worded(400, 'InvalidOperation', said),
  badOperation: worded(400, 'InvalidOperation', (op: string, problem: string) => `Invalid operation "${op}": ${problem}.`),
  operationNotAvailable: worded(
    400,
    'OperationNotAvailable',
    (op: string, what: string) => `Operation "${op}" is not available on this server: ${what} needs the object/face detection add-on.`,
  ),
  /** A tool this server lacks (ffmpeg, a sandbox). */
  notImplemented: worded(501, 'NotImplemented', said),
  timeout: worded(400, 'ProcessingTimeout', said),
  overloaded: fixed(503, 'Overloaded', 'The image processor is busy; retry shortly.', { 'retry-after': '1' }),
  detectorBusy: fixed(503, 'DetectorBusy', 'The detector is busy; try again shortly.'),
  rasterizerMissing: worded(500, 'InternalError', (reason: string) => `Cannot start the SVG rasterizer: ${reason}`),
};
