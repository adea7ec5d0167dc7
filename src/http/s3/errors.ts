/**
 * Errors of the S3-compatible surface in S3's XML (`<Error><Code>…`), with S3's statuses. The
 * feature throws `S3Error` with S3's codes; an AppError from a shared service (metadata limits,
 * throttling, a full disk) gets the S3 code of its status.
 */
import type http from 'node:http';
import { AppError } from '../../core/errors.js';
import { requestIdOf } from '../common/request-id.js';

export class S3Error extends AppError {
  constructor(status: number, code: string, message: string, headers: Readonly<Record<string, string>> = {}) {
    super(status, code, message, headers);
    this.name = 'S3Error';
  }
}

export const s3Error = (status: number, code: string, message: string, headers?: Record<string, string>): S3Error => new S3Error(status, code, message, headers);

/** S3's code and status for an error of a shared service. */
function s3Shape(err: AppError): { status: number; code: string } {
  if (err instanceof S3Error) return { status: err.status, code: err.code };
  switch (err.status) {
    case 400:
      return { status: 400, code: 'InvalidArgument' };
    case 401:
    case 403:
      return { status: 403, code: 'AccessDenied' };
    case 404:
      return { status: 404, code: 'NoSuchKey' };
    case 413:
      return { status: 400, code: 'EntityTooLarge' };
    // S3 throttles with 503 SlowDown: every S3 client backs off and retries on it.
    case 429:
      return { status: 503, code: 'SlowDown' };
    case 507:
      return { status: 507, code: 'InsufficientStorage' };
    default:
      return { status: err.status >= 500 ? err.status : 400, code: err.status >= 500 ? 'InternalError' : 'InvalidRequest' };
  }
}

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Renders `err` (an AppError, else a 500) as S3's error document; HEAD answers carry no body. */
export function sendS3Error(req: http.IncomingMessage, res: http.ServerResponse, err: AppError | null): void {
  const { status, code } = err ? s3Shape(err) : { status: 500, code: 'InternalError' };
  const message = err ? err.message : 'We encountered an internal error. Please try again.';
  const requestId = requestIdOf(res) ?? '';
  const resource = (req.url ?? '/').split('?')[0] ?? '/';
  const body = Buffer.from(
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${escapeXml(message)}</Message><Resource>${escapeXml(resource)}</Resource><RequestId>${escapeXml(requestId)}</RequestId></Error>`,
  );
  // The request id goes out with every S3 answer (response.ts).
  const headers: Record<string, string | number> = { ...(err?.headers ?? {}), 'content-type': 'application/xml' };
  if (req.method === 'HEAD') {
    res.writeHead(status, headers).end();
    return;
  }
  // A request refused before its body was read: the connection closes after the answer rather
  // than read (or hang on) the rest of an upload nobody will store.
  if (!req.complete) headers['connection'] = 'close';
  res.writeHead(status, { ...headers, 'content-length': body.length }).end(body);
}
