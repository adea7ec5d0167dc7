/**
 * Upload API error rendering (wire-reference §1.2): plain text with the real status by default;
 * with `jsonerrors=1` a 200 carrying {"error":{status_code, content, error_code}} because the
 * official SDK's browser transport cannot read non-200 bodies.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.js';
import { sendJson } from '../common/json.js';

export const uploadError = (status: number, code: string, message: string, headers: Record<string, string> = {}) =>
  new AppError(status, code, message, headers);

export function wantsJsonErrors(req: FastifyRequest): boolean {
  const q = req.query as Record<string, unknown> | undefined;
  const v = q?.['jsonerrors'];
  return v === '1' || v === 'true' || v === 'True';
}

export function renderUploadError(req: FastifyRequest, reply: FastifyReply, err: AppError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  if (wantsJsonErrors(req)) {
    return sendJson(reply, 200, { error: { status_code: err.status, content: err.message, error_code: err.code } });
  }
  return reply.code(err.status).header('content-type', 'text/plain; charset=utf-8').send(err.message);
}
