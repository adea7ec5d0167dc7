/** Errors every HTTP surface answers alike (each renders them in its own wire format). */
import { fixed } from './define.js';

const INSUFFICIENT_STORAGE_MESSAGE = 'Insufficient storage: the server has no space left to store this. Try again later.';

export const commonErrors = {
  /** A full disk; `code` is the Upload API's error_code. */
  insufficientStorage: fixed(507, 'InsufficientStorageError', INSUFFICIENT_STORAGE_MESSAGE, { 'retry-after': '60' }),
  /** A document (e.g. the OpenAPI one) a surface does not serve; each surface renders its 404. */
  notFound: fixed(404, 'NotFound', 'Not found.'),
  badJson: fixed(400, 'BadJson', 'Request body is not valid JSON.'),
  badBody: fixed(400, 'BadBody', 'Expected a JSON object or form-urlencoded body.'),
};
