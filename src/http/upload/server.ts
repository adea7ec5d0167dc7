/**
 * The Upload API surface: CORS as the browser SDK needs it, body encodings merged, one error
 * renderer (plain text or `jsonerrors`), and one plugin per endpoint.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { clientErrorHandler } from '../common/client-error.js';
import type { RoutePlugin } from '../../feature.js';
import multipart from '@fastify/multipart';
import { isAppError } from '../../core/errors.js';
import type { AppContext } from '../../context.js';
import type { HttpsOptions } from '../common/tls.js';
import { MAX_FILES_PER_REQUEST } from './limits.js';
import { renderUploadError, wantsJsonErrors } from './errors.js';
import { publicKeyFields } from './params.js';
import { throttleUpload, uploadLimiters } from '../common/throttle.js';
import { isClientAbort, logClientAbort } from '../common/client-abort.js';
import { insufficientStorage, isOutOfSpace } from '../common/disk-space.js';
import { requestRef } from '../common/request-ref.js';
import { fixMultipartParserWedge } from './multipart-parser-fix.js';
import { answerBeforeUnreadBodies } from '../common/unread-body.js';
import { routeCatalog } from '../common/openapi/catalog.js';
import { checkResponses } from '../common/response-check.js';
import { uploadErrorText, uploadJsonError } from './route.js';
import { serveOpenApi } from '../common/openapi/serve.js';
import { uploadDocumentInfo } from './openapi-info.js';
import { uploadErrors } from '../../core/error-catalogue/upload.js';


/** `routes`: the Upload API routes every feature contributes. */
export async function buildUploadServer(ctx: AppContext, https: HttpsOptions | null, routes: RoutePlugin[]): Promise<FastifyInstance> {
  const app = Fastify({
    logger: false,
    bodyLimit: 1024 * 1024,
    routerOptions: { ignoreDuplicateSlashes: true },
    // req.ip is the client: X-Forwarded-For is read only when the peer is a configured proxy.
    trustProxy: ctx.config.trustedProxies.length > 0 ? ctx.config.trustedProxies : false,
    // Requests the HTTP parser refuses: answered with Connection: close (client-error.ts).
    clientErrorHandler: clientErrorHandler((_status, message) => ({ contentType: 'text/plain; charset=utf-8', body: message })),
    ...(https ? { https } : {}),
  });
  fixMultipartParserWedge();
  const catalog = routeCatalog(app);
  if (ctx.config.checkResponses) checkResponses(app, ctx.log, (req) => (wantsJsonErrors(req) ? uploadJsonError : undefined), { description: 'Refused.', schema: uploadErrorText, contentType: 'text/plain' });
  await app.register(multipart, {
    limits: { fileSize: ctx.config.maxUploadBytes, files: MAX_FILES_PER_REQUEST, fields: 1000, fieldSize: 64 * 1024, parts: 1200, headerPairs: 100 },
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(String(body))));
  });
  // Raw bodies (multipart part PUTs) are read as streams by their routes.
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));

  app.addHook('onRequest', async (req, reply) => {
    reply
      .header('access-control-allow-origin', '*')
      .header('access-control-allow-credentials', 'true')
      .header('access-control-expose-headers', 'Warning, Retry-After');
    // A route with its own OPTIONS handler (tus discovery) answers its preflights itself.
    if (req.method === 'OPTIONS' && req.routeOptions.method !== 'OPTIONS') {
      reply
        .header('access-control-allow-methods', 'GET, POST, PUT, HEAD, OPTIONS')
        .header('access-control-allow-headers', req.headers['access-control-request-headers'] ?? 'X-UC-User-Agent, X-PINGOTHER, DNT, Authorization, Content-Type')
        .header('access-control-max-age', '1')
        .code(200)
        .send();
    }
  });

  // An early refusal reaches the client, and leaves the connection usable or closes it cleanly.
  answerBeforeUnreadBodies(app);

  // Per-client-address and per-project throttling (src/throttle): 429 RequestThrottledError with Retry-After.
  const limiters = uploadLimiters(ctx);
  const keyFields = publicKeyFields(ctx.config.sdkAliases);
  app.addHook('preHandler', async (req) => throttleUpload(limiters, req, keyFields));

  app.setNotFoundHandler((req, reply) =>
    renderUploadError(req, reply, uploadErrors.notFound()),
  );
  app.setErrorHandler((err: Error, req, reply) => {
    if (isAppError(err)) return renderUploadError(req, reply, err);
    if (isOutOfSpace(err)) return renderUploadError(req, reply, insufficientStorage(ctx.log, err, requestRef(req.raw, reply.raw)));
    const status = (err as { statusCode?: number }).statusCode;
    if (status === 413) return renderUploadError(req, reply, uploadErrors.requestTooLarge());
    if (status && status >= 400 && status < 500) return renderUploadError(req, reply, uploadErrors.requestFailed(status));
    if (isClientAbort(err, req.raw)) logClientAbort(ctx.log, err, requestRef(req.raw, reply.raw));
    else ctx.log.error({ err, ...requestRef(req.raw, reply.raw) }, 'upload handler failed');
    return renderUploadError(req, reply, uploadErrors.internal());
  });

  serveOpenApi(app, catalog, () => uploadDocumentInfo(ctx));
  for (const plugin of routes) await app.register(plugin);
  return app;
}
