/** REST: GET /project/ (wire-reference §2.9) and POST /project/cdn_tokens/ (docs/cdn-signed-urls.md). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { FilesContext } from './context.js';
import { parseBoolean, REST_API_BOOLEANS } from '../core/booleans.js';
import { formOrJsonBody, sendJson } from '../http/common/json.js';
import { parsedField } from '../http/common/route.js';
import { notFoundAnswer, restRoute } from '../http/rest/route.js';
import { CDN_TOKEN_MAX_TTL_S } from '../projects/service.js';
import { restErrors } from '../core/error-catalogue/rest.js';
import { restFieldErrors } from '../core/error-catalogue/rest-fields.js';


const projectJson = z.object({ collaborators: z.array(z.unknown()), name: z.string(), pub_key: z.string(), autostore_enabled: z.boolean() });

const tokenBody = z.object({
  path: parsedField({ type: 'string', description: 'A CDN path starting with a file UUID or group id, or a CDN URL.' }, (path) => {
    if (typeof path !== 'string' || path === '') throw restFieldErrors.tokenPathRequired();
    return path;
  }),
  expire_in: parsedField({ type: 'integer', minimum: 1, maximum: CDN_TOKEN_MAX_TTL_S, default: 300, description: 'Lifetime in seconds.' }, (raw) => {
    const ttlRaw = raw ?? 300;
    const ttlS = typeof ttlRaw === 'string' && /^\d+$/.test(ttlRaw) ? Number(ttlRaw) : ttlRaw;
    if (typeof ttlS !== 'number' || !Number.isInteger(ttlS) || ttlS < 1 || ttlS > CDN_TOKEN_MAX_TTL_S) throw restFieldErrors.tokenExpireOutOfRange(CDN_TOKEN_MAX_TTL_S);
    return ttlS;
  }).optional(),
  wildcard: parsedField({ type: 'boolean', description: 'Sign every path under `path` (`path*`).' }, (v) => flag(v, 'wildcard')).optional(),
  exact_url: parsedField({ type: 'boolean', description: 'Sign the exact URL instead of an ACL.' }, (v) => flag(v, 'exact_url')).optional(),
});

const tokenJson = z.object({ token: z.string(), acl: z.string().nullable(), expire: z.number().int(), url: z.string() });

export function projectRoutes(ctx: FilesContext) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    restRoute(
      app,
      { method: 'GET', url: '/project/', tags: ['Project'], summary: 'The project of the credentials', responses: { 200: { description: 'The project.', schema: projectJson }, 404: notFoundAnswer('Project') } },
      async (req, reply) => {
        const project = await ctx.projects.byId(req.projectId);
        if (!project) throw restErrors.notFound();
        return sendJson(reply, 200, { collaborators: [], name: project.name, pub_key: project.pubKey, autostore_enabled: project.autostore });
      },
    );

    // Mints a signed CDN URL token for the caller's project: {path, expire_in?, wildcard?, exact_url?}.
    restRoute(
      app,
      {
        method: 'POST',
        url: '/project/cdn_tokens/',
        tags: ['Project'],
        summary: 'Mint a signed CDN URL token',
        body: { schema: tokenBody, read: formOrJsonBody, contentTypes: ['application/json', 'application/x-www-form-urlencoded'] },
        responses: { 200: { description: 'The token and a signed URL.', schema: tokenJson } },
      },
      async (req, reply, { body }) => {
        const wildcard = body.wildcard ?? false;
        const exactUrl = body.exact_url ?? false;
        if (wildcard && exactUrl) throw restFieldErrors.tokenWildcardAndExactUrl();
        const minted = await ctx.projects.mintCdnToken(req.projectId, ctx.bases.cdn, { path: body.path, ttlS: body.expire_in ?? 300, wildcard, exactUrl });
        return sendJson(reply, 200, { token: minted.token, acl: minted.acl, expire: minted.expire, url: minted.url });
      },
    );
  };
}

function flag(value: unknown, name: string): boolean {
  if (value === undefined || value === null) return false;
  const b = parseBoolean(value, REST_API_BOOLEANS);
  if (b === undefined) throw restFieldErrors.notTrueOrFalse(name);
  return b;
}
