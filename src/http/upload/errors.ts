/**
 * Upload API error rendering (wire-reference §1.2): plain text with the real status by default;
 * with `jsonerrors=1` a 200 carrying {"error":{status_code, content, error_code}} because the
 * official SDK's browser transport cannot read non-200 bodies.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseBoolean, UPLOAD_API_BOOLEANS } from '../../core/booleans.js';
import { AppError, isAppError } from '../../core/errors.js';
import { sendJson } from '../common/json.js';
import { uploadErrors } from '../../core/error-catalogue/upload.js';

export const fileTooLarge = uploadErrors.fileTooLarge;

export function wantsJsonErrors(req: FastifyRequest): boolean {
  const q = req.query as Record<string, unknown> | undefined;
  return parseBoolean(q?.['jsonerrors'], UPLOAD_API_BOOLEANS) === true;
}

export function renderUploadError(req: FastifyRequest, reply: FastifyReply, err: AppError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  if (wantsJsonErrors(req)) {
    return sendJson(reply, 200, { error: { status_code: err.status, content: err.message, error_code: err.code } });
  }
  return reply.code(err.status).header('content-type', 'text/plain; charset=utf-8').send(err.message);
}

/** @fastify/multipart and busboy errors mapped to the wire's codes. */
export function mapMultipartError(err: unknown): unknown {
  if (isAppError(err)) return err;
  const code = (err as { code?: string }).code;
  switch (code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return fileTooLarge();
    case 'FST_FILES_LIMIT':
      return uploadErrors.tooManyFiles();
    case 'FST_FIELDS_LIMIT':
    case 'FST_PARTS_LIMIT':
      return uploadErrors.tooManyFields();
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
    case 'FST_PROTO_VIOLATION':
      return uploadErrors.bodyUnparsable();
    default:
      // busboy refuses a boundary longer than its search needle (about 254 characters) at construction.
      if (err instanceof Error && /unexpected end|terminated early|malformed part header|boundary not found|multipart|needle cannot have a length/i.test(err.message)) {
        return uploadErrors.bodyUnparsable();
      }
      return err;
  }
}
