/**
 * Parameters of the non-file upload endpoints (multipart start/complete, from_url): query string,
 * urlencoded body or multipart fields, merged with the body winning (wire-reference §1.1).
 * Multipart bodies here carry fields only; a file part is refused rather than buffered.
 */
import type { FastifyRequest } from 'fastify';
import { mapMultipartError } from '../http/upload/errors.js';
import { checkNoNulls, queryParams, type Params } from '../http/upload/params.js';
import { uploadErrors } from '../core/error-catalogue/upload.js';

export async function requestParams(req: FastifyRequest): Promise<Params> {
  const params = queryParams(req.query);
  if (req.isMultipart()) {
    try {
      for await (const part of req.parts()) {
        if (part.type === 'file') {
          part.file.resume();
          throw uploadErrors.requestProcessingFailed();
        }
        if (typeof part.value === 'string') params.set(part.fieldname, part.value);
      }
    } catch (err) {
      throw mapMultipartError(err);
    }
  } else if (req.body && typeof req.body === 'object' && typeof (req.body as { pipe?: unknown }).pipe !== 'function') {
    for (const [k, v] of Object.entries(req.body as Record<string, unknown>)) {
      if (typeof v === 'string') params.set(k, v);
    }
  } else if (req.body && typeof (req.body as { resume?: unknown }).resume === 'function') {
    // An unparsed body of another type: drain it so the connection stays usable.
    (req.body as { resume(): void }).resume();
  }
  checkNoNulls(params);
  return params;
}
