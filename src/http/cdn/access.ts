/**
 * Signed CDN URLs: a project that requires them (docs/cdn-signed-urls.md) answers 403 to a CDN
 * request without a valid `?token=`. Asked by the file and group handlers once they know the
 * project; the policy comes from the projects service's short cache, so this adds no query to a
 * warm request, nor a promise (the cached policy is read synchronously: undefined, or a throw).
 * The token never reaches a cache key: plans and rendition keys ignore the query.
 */
import type { IncomingMessage } from 'node:http';
import type { AppContext } from '../../context.js';
import type { CdnPolicy } from '../../projects/service.js';
import { checkCdnToken } from '../../auth/cdn-token.js';
import { cdnErrors } from '../../core/error-catalogue/media.js';

export function requireCdnAccess(ctx: AppContext, req: IncomingMessage, projectId: number): Promise<void> | undefined {
  const cached = ctx.projects.cachedCdnPolicy(projectId);
  if (cached) {
    checkAccess(ctx, req, cached);
    return undefined;
  }
  return ctx.projects.cdnPolicy(projectId).then((policy) => checkAccess(ctx, req, policy));
}

function checkAccess(ctx: AppContext, req: IncomingMessage, policy: CdnPolicy): void {
  if (!policy.signed) return;
  const raw = req.url ?? '/';
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  const token = q < 0 ? null : rawToken(raw.slice(q + 1));
  // Signed on but no key: nothing can be valid (the key is made when signing is switched on).
  const check = policy.key
    ? checkCdnToken(policy.key, token, { path, url: `${ctx.bases.cdn}${path}` }, Math.floor(Date.now() / 1000))
    : { ok: false as const, reason: 'This project has no CDN signing key.' };
  if (!check.ok) throw cdnErrors.tokenInvalid(check.reason);
}

/**
 * The `token` parameter as written: builders put it in the URL unescaped and the `%7e` in its acl
 * must stay as is (decoded it would split the fields). A fully percent-encoded token is decoded once.
 */
function rawToken(query: string): string | null {
  for (const pair of query.split('&')) {
    if (!pair.startsWith('token=')) continue;
    const value = pair.slice(6);
    if (value.includes('=')) return value;
    try {
      return decodeURIComponent(value);
    } catch {
      return value;
    }
  }
  return null;
}
