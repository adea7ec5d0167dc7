/**
 * The CDN surface on plain node:http: it is the hot path, so no framework sits between the socket
 * and the bytes. URL -> typed request (url.ts) -> the handler a feature contributed for files or groups.
 */
import http from 'node:http';
import https from 'node:https';
import type { AppContext } from '../../context.js';
import { isAppError } from '../../core/errors.js';
import type { HttpsOptions } from '../common/tls.js';
import { sendCdnError } from './errors.js';
import type { CdnHandlers } from '../../feature.js';
import { parseCdnPath } from './url.js';
import { isClientAbort, logClientAbort } from '../common/client-abort.js';
import { insufficientStorage, isOutOfSpace } from '../common/disk-space.js';
import { requestRef } from '../common/request-ref.js';
import { cdnErrors } from '../../core/error-catalogue/media.js';
import { responseAnsweringId } from '../common/request-id.js';

// Every CDN answer carries its request id (metrics.ts chose it) as X-Request-Id.
const CdnResponse = responseAnsweringId(['x-request-id']);

/** The CDN surface: parses each URL once and hands it to the feature that answers its kind (CdnHandlers). */
export function buildCdnServer(ctx: AppContext, tls: HttpsOptions | null, handlers: Partial<CdnHandlers>): http.Server {
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    handle(handlers, req, res).catch((err: unknown) => {
      if (res.headersSent) return void res.destroy();
      if (isOutOfSpace(err)) err = insufficientStorage(ctx.log, err, requestRef(req, res));
      if (isAppError(err)) return sendCdnError(res, err);
      if (isClientAbort(err, req)) return logClientAbort(ctx.log, err, requestRef(req, res));
      ctx.log.error({ err, ...requestRef(req, res) }, 'CDN request failed');
      sendCdnError(res, cdnErrors.internal());
    });
  };
  // Its answers carry the request id themselves (response.ts).
  return tls ? https.createServer({ ...tls, ServerResponse: CdnResponse }, handler) : http.createServer({ ServerResponse: CdnResponse }, handler);
}

async function handle(handlers: Partial<CdnHandlers>, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  if (req.method === 'OPTIONS') {
    res.writeHead(204, {
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'HEAD, GET, OPTIONS',
      'access-control-allow-headers': req.headers['access-control-request-headers'] ?? '*',
      'access-control-max-age': '86400',
    });
    return void res.end();
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') return sendCdnError(res, cdnErrors.methodNotAllowed());
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  const request = parseCdnPath(path);
  if (request.kind === 'group') {
    if (!handlers.group) return sendCdnError(res, cdnErrors.notFound());
    return handlers.group(req, res, request);
  }
  if (request.kind === 'conversion') {
    if (!handlers.conversion) return sendCdnError(res, cdnErrors.notFound());
    return handlers.conversion(req, res, request);
  }
  if (!handlers.file) return sendCdnError(res, cdnErrors.fileNotFound());
  // Awaited rather than returned: an async function that returns a promise adopts it through two
  // more microtask turns, on every file request.
  await handlers.file(req, res, request);
}
