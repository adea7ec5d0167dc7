/**
 * The REST API surface: versioning (Accept), authentication, one error renderer, and one plugin per
 * resource. Bodies are captured raw because the request signature covers their MD5.
 */
import type { IncomingMessage } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { BodyError, isAppError } from '../../core/errors.js';
import { parseRestVersion, type RestVersion } from './version.js';
import { checkRestAuth, parseRestAuth, restAuthPubKey, verifyRestAuth, type RestAuthRequest } from '../../auth/rest-signature.js';
import { VerifiedSignatures } from '../../auth/verified-signatures.js';
import type { AppContext } from '../../context.js';
import type { ProjectRow } from '../../projects/service.js';
import { rawBody, sendJson } from '../common/json.js';
import { isDirectLoopback, isSecure, proxyMatcher } from '../common/trust.js';
import type { RestQuickRead, RestSessionAuth, RoutePlugin } from '../../feature.js';
import { attachQuickReads } from './quick-reads.js';
import type { HttpsOptions } from '../common/tls.js';
import { restLimiter, throttleRest, throttleRestNow } from '../common/throttle.js';
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

const NO_BODY = Buffer.alloc(0);

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
  const trusted = proxyMatcher(ctx.config.trustedProxies);
  app.decorateRequest('projectId', 0);
  app.decorateRequest('apiVersion', '0.7');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  const catalog = routeCatalog(app);
  if (ctx.config.checkResponses) checkResponses(app, ctx.log, undefined, { description: 'Refused.', schema: restErrorJson });
  const verified = new VerifiedSignatures();

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

  // Simple auth sends the secret itself: it needs HTTPS, or (by default) a local client on
  // loopback. Worked out only when asked (signed requests never ask): parsing the peer's address costs.
  const allowsSimpleAuth = (raw: IncomingMessage): boolean => isSecure(raw, trusted) || (ctx.config.simpleAuthLoopback && isDirectLoopback(raw));
  // The request as the signature check reads it, on both paths. A class, not an object literal
  // with a getter: the literal cost a new getter function and shape work per request (docs/performance.md).
  const authOptions = { aliases: ctx.config.sdkAliases, verified };
  class RawAuthRequest implements RestAuthRequest {
    readonly method: string;
    readonly uri: string;
    readonly headers: IncomingMessage['headers'];
    constructor(
      private readonly raw: IncomingMessage,
      readonly body: Buffer,
    ) {
      this.method = raw.method ?? '';
      this.uri = raw.url ?? '';
      this.headers = raw.headers;
    }
    get secure(): boolean {
      return allowsSimpleAuth(this.raw);
    }
  }
  const authenticate = async (req: FastifyRequest): Promise<void> => {
    req.apiVersion = parseRestVersion(req.headers.accept, ctx.config.sdkAliases);
    if (req.headers.authorization === undefined) {
      for (const session of extras.sessions ?? []) {
        const projectId = await session(req);
        if (projectId !== null) return void (req.projectId = projectId);
      }
    }
    const authReq = new RawAuthRequest(req.raw, rawBody(req));
    const check = (found: { project: ProjectRow; secrets: string[] } | null) =>
      verifyRestAuth(authReq, async () => (found ? { projectId: found.project.id, secrets: found.secrets } : null), authOptions);
    const pubKey = restAuthPubKey(req.headers);
    // A key added a moment ago (maybe on another node) must work at once: the same retry with keys
    // read afresh as the Upload API's credentials check. Without a well-formed header there is no
    // key to look up, and the check answers the spec's 401.
    req.projectId = pubKey === null ? await check(null) : await ctx.projects.withKeys(pubKey, check);
  };
  /**
   * The common case, decided without a promise: a signed (or Simple) request of a project whose
   * keys this node has cached, checked against them. Null when that does not apply or the check fails: the full
   * `authenticate` then answers (reading keys afresh first, so a key added elsewhere still works).
   */
  const cachedProject = (raw: IncomingMessage, body: Buffer): number | null => {
    const authReq = new RawAuthRequest(raw, body);
    try {
      const auth = parseRestAuth(authReq, ctx.config.sdkAliases);
      const found = ctx.projects.cached(auth.pubKey);
      if (!found) return null;
      return checkRestAuth(authReq, auth, { projectId: found.project.id, secrets: found.secrets }, authOptions);
    } catch {
      return null;
    }
  };
  // Then per-project throttling, once authentication has named the project: one hook for both.
  // Callback-style: the common request (cached keys, in-process limiter) passes without a promise
  // or a microtask turn; anything else takes the full path.
  const limiter = restLimiter(ctx);
  app.addHook('preHandler', (req, _reply, done) => {
    if (isOpenRoute(req)) return done();
    let known: number | null = null;
    try {
      req.apiVersion = parseRestVersion(req.headers.accept, ctx.config.sdkAliases);
      known = req.headers.authorization === undefined ? null : cachedProject(req.raw, rawBody(req));
      if (known !== null) {
        req.projectId = known;
        if (throttleRestNow(limiter, known)) return done();
      }
    } catch (err) {
      return done(err as Error);
    }
    (known !== null ? Promise.resolve() : authenticate(req))
      .then(() => throttleRest(limiter, req.projectId))
      .then(() => done(), done);
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
    version: (accept) => parseRestVersion(accept, ctx.config.sdkAliases),
    project: (raw) => cachedProject(raw, NO_BODY),
    admit: (projectId) => throttleRestNow(limiter, projectId),
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
