/**
 * The REST API surface: versioning (Accept), authentication, one error renderer, and one plugin per
 * resource. Bodies are captured raw because the request signature covers their MD5.
 */
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { BodyError, isAppError } from '../../core/errors.js';
import type { RestVersion } from './version.js';
import type { AppContext } from '../../context.js';
import { rawBody, sendJson } from '../common/json.js';
import type { RestQuickRead, RestSessionAuth, RoutePlugin } from '../../feature.js';
import { attachQuickReads } from './quick-reads.js';
import type { HttpsOptions } from '../common/tls.js';
import { restGate, type Admitted, type AtOnce } from './gate.js';
import { isClientAbort, logClientAbort } from '../common/client-abort.js';
import { insufficientStorage, isOutOfSpace } from '../common/disk-space.js';
import { requestRef } from '../common/request-ref.js';
import { clientErrorHandler } from '../common/client-error.js';
import { routeCatalog } from '../common/openapi/catalog.js';
import { checkResponses } from '../common/response-check.js';
import { restErrorJson } from './route.js';
import { serveOpenApi } from '../common/openapi/serve.js';
import { restDocumentInfo } from './openapi-info.js';
import { serveRootPage } from './root-page.js';
import { SESSION_HEADER } from './session-header.js';
import { restErrors } from '../../core/error-catalogue/rest.js';

declare module 'fastify' {
  interface FastifyRequest {
    projectId: number;
    /** The REST API version the `Accept` header asked for (version.ts). */
    apiVersion: RestVersion;
  }
  interface FastifyContextConfig {
    /** A route that authenticates on its own (RestExtras.open): the API's hooks skip it. */
    openRoute?: boolean;
  }
}

/** What the REST surface serves besides the API's routes. */
export interface RestExtras {
  /** Routes that authenticate on their own (the dashboard's pages and sign-in). */
  open?: RoutePlugin[];
  /** Session checks tried, in order, on a request without an Authorization header. */
  sessions?: RestSessionAuth[];
  /** Reads answered before routing when they can be at once (features' `restQuickReads`). */
  quickReads?: RestQuickRead[];
}

const isOpenRoute = (req: FastifyRequest): boolean => req.routeOptions.config?.openRoute === true;

/** `routes`: the REST routes every feature contributes; they run after authentication. */
export async function buildRestServer(ctx: AppContext, https: HttpsOptions | null, routes: RoutePlugin[], extras: RestExtras = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: false,
    bodyLimit: 4 * 1024 * 1024,
    // Requests the HTTP parser refuses: answered with Connection: close (client-error.ts).
    clientErrorHandler: clientErrorHandler((_status, message) => ({ contentType: 'application/json', body: JSON.stringify({ detail: message }) })),
    ...(https ? { https } : {}),
  });
  app.decorateRequest('projectId', 0);
  app.decorateRequest('apiVersion', '0.7');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  const catalog = routeCatalog(app);
  if (ctx.config.checkResponses) checkResponses(app, ctx.log, undefined, { description: 'Refused.', schema: restErrorJson });

  // Callback-style hooks where nothing is awaited: an async hook costs a promise and a microtask
  // turn on every request (docs/performance.md).
  app.addHook('onRequest', (req, reply, done) => {
    if (isOpenRoute(req)) return done();
    reply.header('access-control-allow-origin', '*');
    if (req.method !== 'OPTIONS') return done();
    // Answered here: the request goes no further (a callback hook that replies does not call done).
    reply
      .header('access-control-allow-methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS')
      .header('access-control-allow-headers', req.headers['access-control-request-headers'] ?? 'Authorization, Content-Type, Accept')
      .header('access-control-max-age', '600')
      .code(204)
      .send();
  });

  // Accept, authentication and throttling: one gate, passed once per request, here or in front
  // of Fastify (gate.ts). Callback-style: the common request (cached keys, in-process limiter)
  // passes without a promise or a microtask turn; anything else takes the full path.
  const gate = restGate(ctx, extras.sessions ?? []);
  app.addHook('preHandler', (req, _reply, done) => {
    if (isOpenRoute(req)) return done();
    const carried = gate.carried(req.raw);
    if (carried !== undefined) return void admit(req, carried, done);
    let partial: AtOnce;
    try {
      partial = gate.atOnce(req.raw, rawBody(req));
    } catch (err) {
      return done(err as Error);
    }
    if (partial.admitted) return void admit(req, partial, done);
    req.apiVersion = partial.version;
    gate.full(req, partial).then((admitted) => admit(req, admitted, done), done);
  });

  // Reads answered from memory in front of the routes, with the same checks (quick-reads.ts).
  let closing = false;
  let quickAnswers = 0;
  ctx.metrics.counterOf('stowage_rest_quick_answers_total', 'REST reads answered from memory before routing since the node started (http/rest/quick-reads.ts)', () => quickAnswers);
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  attachQuickReads(app.server, {
    reads: extras.quickReads ?? [],
    gate,
    answering: (res, route) => {
      quickAnswers++;
      ctx.metrics.routeLabel(res, route);
    },
    closing: () => closing,
  });

  app.setNotFoundHandler((_req, reply) => sendJson(reply, 404, { detail: restErrors.notFound().message }));
  app.setErrorHandler((err: Error, req, reply) => {
    if (isOutOfSpace(err)) err = insufficientStorage(ctx.log, err, requestRef(req.raw, reply.raw));
    if (isAppError(err)) {
      for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
      return sendJson(reply, err.status, err instanceof BodyError ? err.body : { detail: err.message });
    }
    const status = (err as { statusCode?: number }).statusCode;
    if (status && status >= 400 && status < 500) return sendJson(reply, status, { detail: err.message });
    if (isClientAbort(err, req.raw)) logClientAbort(ctx.log, err, requestRef(req.raw, reply.raw));
    else ctx.log.error({ err, ...requestRef(req.raw, reply.raw) }, 'REST handler failed');
    return sendJson(reply, 500, { detail: 'Internal server error.' });
  });

  // "Try it out" works with a dashboard session too: the page sends the header the session needs.
  serveOpenApi(app, catalog, () => restDocumentInfo(ctx), { sessionHeader: SESSION_HEADER });
  serveRootPage(app, ctx);
  for (const plugin of routes) await app.register(plugin);
  await app.register(async (scope) => {
    scope.addHook('onRoute', (route) => {
      route.config = { ...(route.config ?? {}), openRoute: true };
    });
    for (const plugin of extras.open ?? []) await scope.register(plugin);
  });
  return app;
}

function admit(req: FastifyRequest, admitted: Admitted, done: () => void): void {
  req.apiVersion = admitted.version;
  req.projectId = admitted.projectId;
  done();
}
