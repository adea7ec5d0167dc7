/**
 * The REST API's one gate: the API version of `Accept`, who the request comes from (a signature,
 * Simple auth or a browser session) and the project's throttle. Every API request passes it once,
 * at whichever entrance sees it first: the quick reads in front of Fastify (quick-reads.ts) or the
 * API's `preHandler` hook (server.ts). A request the quick reads admitted and then hand to Fastify
 * carries its admission along, so the hook neither checks it again nor spends the budget twice.
 *
 * Two ways through, one set of checks:
 *   - `atOnce`: without a promise, for the common request (a project whose keys this node has
 *     cached, an in-process limiter). Async hooks cost a promise and a microtask turn on every
 *     request (docs/performance.md).
 *   - `full`: everything else: sessions, keys read afresh (a key added a moment ago, maybe on
 *     another node, works at once), a limiter that decides elsewhere (Redis).
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { ProjectRow } from '../../projects/service.js';
import type { RestSessionAuth } from '../../feature.js';
import { checkRestAuth, parseRestAuth, restAuthPubKey, verifyRestAuth, type RestAuthRequest } from '../../auth/rest-signature.js';
import { VerifiedSignatures } from '../../auth/verified-signatures.js';
import { parseRestVersion, type RestVersion } from './version.js';
import { isDirectLoopback, isSecure, proxyMatcher } from '../common/trust.js';
import { restLimiter, throttleRest, throttleRestNow } from '../common/throttle.js';

/** A request let through: its API version and its project, the project's budget spent. */
export interface Admitted {
  version: RestVersion;
  projectId: number;
}

/**
 * What `atOnce` could tell: `admitted`, or how far it got before only `full` can tell (the version
 * and, when the cached keys named it, the project). A refusal it can tell at once is thrown.
 */
export type AtOnce = { admitted: true; version: RestVersion; projectId: number } | { admitted: false; version: RestVersion; projectId: number | null };

export interface RestGate {
  /** The checks decided without a promise (the budget is spent only when admitted); throws a refusal. */
  atOnce(raw: IncomingMessage, body: Buffer): AtOnce;
  /** The rest of the checks after `atOnce` did not admit: sessions, keys read afresh, the limiter's full path. */
  full(req: FastifyRequest, partial: AtOnce): Promise<Admitted>;
  /** Marks a request admitted in front of Fastify, which then lets it through unchecked (`carried`). */
  carry(raw: IncomingMessage, admitted: Admitted): void;
  /** The admission a request carries from in front of Fastify, if any. */
  carried(raw: IncomingMessage): Admitted | undefined;
}

export function restGate(ctx: AppContext, sessions: readonly RestSessionAuth[]): RestGate {
  const trusted = proxyMatcher(ctx.config.trustedProxies);
  const verified = new VerifiedSignatures();
  const limiter = restLimiter(ctx);
  const aliases = ctx.config.sdkAliases;
  const authOptions = { aliases, verified };
  const admittedInFront = new WeakMap<IncomingMessage, Admitted>();

  // Simple auth sends the secret itself: it needs HTTPS, or (by default) a local client on
  // loopback. Worked out only when asked (signed requests never ask): parsing the peer's address costs.
  const allowsSimpleAuth = (raw: IncomingMessage): boolean => isSecure(raw, trusted) || (ctx.config.simpleAuthLoopback && isDirectLoopback(raw));
  // The request as the signature check reads it, on both paths. A class, not an object literal
  // with a getter: the literal cost a new getter function and shape work per request (docs/performance.md).
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

  /**
   * A signed (or Simple) request of a project whose keys this node has cached, checked against
   * them; null when that does not apply or the check fails: `full` then reads the keys afresh, so
   * a key added elsewhere still works, and answers the refusal.
   */
  const cachedProject = (raw: IncomingMessage, body: Buffer): number | null => {
    if (raw.headers.authorization === undefined) return null;
    const authReq = new RawAuthRequest(raw, body);
    try {
      const auth = parseRestAuth(authReq, aliases);
      const found = ctx.projects.cached(auth.pubKey);
      if (!found) return null;
      return checkRestAuth(authReq, auth, { projectId: found.project.id, secrets: found.secrets }, authOptions);
    } catch {
      return null;
    }
  };

  const authenticate = async (req: FastifyRequest): Promise<number> => {
    if (req.headers.authorization === undefined) {
      for (const session of sessions) {
        const projectId = await session(req);
        if (projectId !== null) return projectId;
      }
    }
    const authReq = new RawAuthRequest(req.raw, Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
    const check = (found: { project: ProjectRow; secrets: string[] } | null) =>
      verifyRestAuth(authReq, async () => (found ? { projectId: found.project.id, secrets: found.secrets } : null), authOptions);
    const pubKey = restAuthPubKey(req.headers);
    // The same retry with keys read afresh as the Upload API's credentials check. Without a
    // well-formed header there is no key to look up, and the check answers the spec's 401.
    return pubKey === null ? check(null) : ctx.projects.withKeys(pubKey, check);
  };

  return {
    atOnce(raw, body) {
      const version = parseRestVersion(raw.headers.accept, aliases);
      const projectId = cachedProject(raw, body);
      if (projectId === null) return { admitted: false, version, projectId };
      return { admitted: throttleRestNow(limiter, projectId), version, projectId };
    },
    async full(req, partial) {
      const projectId = partial.projectId ?? (await authenticate(req));
      await throttleRest(limiter, projectId);
      return { version: partial.version, projectId };
    },
    carry(raw, admitted) {
      admittedInFront.set(raw, admitted);
    },
    carried(raw) {
      return admittedInFront.get(raw);
    },
  };
}
