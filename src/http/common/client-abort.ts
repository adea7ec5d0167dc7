/**
 * A client that closes its connection mid-request (a cancelled upload, a closed tab) is an ordinary
 * event, not a server failure: it is logged at info without a stack, so real errors stand out.
 */
import type http from 'node:http';
import type { Logger } from 'pino';
import type { RequestRef } from './request-ref.js';

/** Errors a stream reports when the other end of the connection went away. */
const CONNECTION_GONE = new Set(['ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_STREAM_DESTROYED']);

/**
 * True when `err` is the consequence of the client leaving: its socket is closed and either the
 * request body never completed or the error is a connection-gone error. An outbound failure (a
 * reset from S3, say) while the client is still connected stays a server error.
 */
export function isClientAbort(err: unknown, req: http.IncomingMessage): boolean {
  if (!req.socket?.destroyed && !req.destroyed) return false;
  const code = (err as { code?: unknown } | null)?.code;
  return !req.complete || (typeof code === 'string' && CONNECTION_GONE.has(code));
}

export function logClientAbort(log: Logger, err: unknown, where: RequestRef): void {
  const e = err as { code?: unknown; message?: unknown } | null;
  log.info({ ...where, reason: String(e?.code ?? e?.message ?? 'closed') }, 'client closed the connection before the request completed');
}
