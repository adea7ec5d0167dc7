/**
 * The REST API surface: versioning (Accept), authentication, one error renderer, and one plugin per
 * resource. Bodies are captured raw because the request signature covers their MD5.
 */
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { AppError, isAppError } from '../../core/errors.js';
import { restAuthPubKey, verifyRestAuth } from '../../auth/rest-signature.js';
import type { AppContext } from '../../context.js';
import type { ProjectRow } from '../../projects/service.js';
import { rawBody, sendJson } from '../common/json.js';
import { isSecure, proxyMatcher } from '../common/trust.js';
import type { RoutePlugin } from '../../feature.js';
import type { HttpsOptions } from '../common/tls.js';
import { restLimiter, throttleRest } from '../common/throttle.js';
import { isClientAbort, logClientAbort } from '../common/client-abort.js';
import { insufficientStorage, isOutOfSpace } from '../common/disk-space.js';

declare module 'fastify' {
  interface FastifyRequest {
    projectId: number;
  }
}

const NEUTRAL_ACCEPT = 'application/vnd.svc-v0.7+json';
const SDK_ACCEPT = 'application/vnd.uploadcare-v0.7+json';
const NOT_ACCEPTABLE = 'Incorrect Accept header provided. Make sure to specify API version. Refer to REST API docs for details.';

/** `routes`: the REST routes every feature contributes; they run after authentication. */
export async function buildRestServer(ctx: AppContext, https: HttpsOptions | null, routes: RoutePlugin[]): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, bodyLimit: 4 * 1024 * 1024, ...(https ? { https } : {}) });
  const trusted = proxyMatcher(ctx.config.trustedProxies);
  app.decorateRequest('projectId', 0);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  app.addHook('onRequest', async (req, reply) => {
    reply.header('access-control-allow-origin', '*');
    if (req.method === 'OPTIONS') {
      reply
        .header('access-control-allow-methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS')
        .header('access-control-allow-headers', req.headers['access-control-request-headers'] ?? 'Authorization, Content-Type, Accept')
        .header('access-control-max-age', '600')
        .code(204)
        .send();
    }
  });

  app.addHook('preHandler', async (req) => {
    checkAccept(req, ctx.config.sdkAliases);
    const authReq = { method: req.method, uri: req.url, headers: req.headers, body: rawBody(req), secure: isSecure(req.raw, trusted) };
    const check = (found: { project: ProjectRow; secrets: string[] } | null) =>
      verifyRestAuth(authReq, async () => (found ? { projectId: found.project.id, secrets: found.secrets } : null), { aliases: ctx.config.sdkAliases });
    const pubKey = restAuthPubKey(req.headers);
    // A key added a moment ago (maybe on another node) must work at once: the same retry with keys
    // read afresh as the Upload API's credentials check. Without a well-formed header there is no
    // key to look up, and the check answers the spec's 401.
    req.projectId = pubKey === null ? await check(null) : await ctx.projects.withKeys(pubKey, check);
  });
  // Per-project throttling, after authentication has named the project.
  const limiter = restLimiter(ctx);
  app.addHook('preHandler', async (req) => throttleRest(limiter, req.projectId));

  app.setNotFoundHandler((_req, reply) => sendJson(reply, 404, { detail: 'Not found.' }));
  app.setErrorHandler((err: Error, req, reply) => {
    if (isOutOfSpace(err)) err = insufficientStorage(ctx.log, err, req.url);
    if (isAppError(err)) {
      for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
      return sendJson(reply, err.status, { detail: err.message });
    }
    const status = (err as { statusCode?: number }).statusCode;
    if (status && status >= 400 && status < 500) return sendJson(reply, status, { detail: err.message });
    if (isClientAbort(err, req.raw)) logClientAbort(ctx.log, err, req.url);
    else ctx.log.error({ err, url: req.url }, 'REST handler failed');
    return sendJson(reply, 500, { detail: 'Internal server error.' });
  });

  for (const plugin of routes) await app.register(plugin);
  return app;
}

function checkAccept(req: FastifyRequest, aliases: boolean): void {
  const accepted = (req.headers.accept ?? '').split(',').map((t) => t.split(';')[0]?.trim().toLowerCase());
  const ok = accepted.includes(NEUTRAL_ACCEPT) || (aliases && accepted.includes(SDK_ACCEPT));
  if (!ok) throw new AppError(406, 'NotAcceptable', NOT_ACCEPTABLE);
}
