/**
 * Request checks the dashboard's cookie-authenticated calls share: same-origin writes (CSRF), the
 * transport a sign-in may travel on, and the session a request carries.
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import type { RestSessionAuth } from '../feature.js';
import { isDirectLoopback, isSecure, proxyMatcher } from '../http/common/trust.js';
import { SESSION_HEADER } from '../http/rest/session-header.js';
import { sessionCookie } from './cookies.js';
import type { SessionRow } from './repo.js';
import type { SessionService } from './sessions.js';
import { adminErrors } from '../core/error-catalogue/admin.js';

/** The header every dashboard API call sends (its reasons: src/http/rest/session-header.ts). */
export const DASHBOARD_HEADER = SESSION_HEADER;

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export class Guards {
  private readonly trusted;

  constructor(private readonly ctx: AppContext, private readonly sessions: SessionService) {
    this.trusted = proxyMatcher(ctx.config.trustedProxies);
  }

  /** HTTPS (on our socket or per a trusted proxy): the cookie gets `Secure`. */
  secure(req: FastifyRequest): boolean {
    return isSecure(req.raw, this.trusted);
  }

  /** A sign-in carries a secret: the same transport rule as the REST API's Simple auth. */
  requireSafeTransport(req: FastifyRequest): void {
    if (this.secure(req) || (this.ctx.config.simpleAuthLoopback && isDirectLoopback(req.raw))) return;
    throw adminErrors.insecureTransport();
  }

  /** A write must come from a page of this very server: its Origin names our host (Host or the REST base URL). */
  requireSameOrigin(req: FastifyRequest): void {
    const origin = req.headers.origin;
    let host: string | null = null;
    try {
      host = origin ? new URL(origin).host : null;
    } catch {
      host = null;
    }
    const ours = [req.headers.host, this.restHost()];
    if (host === null || !ours.includes(host)) throw adminErrors.crossSite();
  }

  /** The REST API's session check (Feature.restSession). */
  restSession(): RestSessionAuth {
    return async (req) => {
      const token = sessionCookie(req.headers.cookie);
      if (token === null || req.headers[DASHBOARD_HEADER] !== '1') return null;
      if (!SAFE_METHODS.has(req.method)) this.requireSameOrigin(req);
      const session = await this.sessions.resolve(token);
      if (!session) throw adminErrors.sessionEnded();
      return session.projectId;
    };
  }

  /** A call of the dashboard's own pages: they send the dashboard header; anything else is a 401. */
  requireDashboardHeader(req: FastifyRequest): void {
    if (req.headers[DASHBOARD_HEADER] !== '1') throw adminErrors.notFromDashboard(DASHBOARD_HEADER);
  }

  /**
   * The session of a dashboard API call that hands out something secret-derived: the cookie and
   * the dashboard header (which a cross-site form cannot set, and a cross-origin script cannot send
   * with the cookie), else 401.
   */
  async pageSession(req: FastifyRequest): Promise<SessionRow> {
    const token = sessionCookie(req.headers.cookie);
    const session = token !== null && req.headers[DASHBOARD_HEADER] === '1' ? await this.sessions.resolve(token) : null;
    if (!session) throw adminErrors.notSignedIn();
    return session;
  }

  private restHost(): string | undefined {
    try {
      return new URL(this.ctx.bases.rest).host;
    } catch {
      return undefined;
    }
  }
}
