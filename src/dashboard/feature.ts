/**
 * The dashboard (docs/dashboard.md): pages served on the REST surface under /dashboard/, a cookie
 * session opened with a project's keys (or the admin token), and that session accepted by the REST
 * API so the pages use the API itself.
 */
import type { AppContext } from '../context.js';
import type { Feature } from '../feature.js';
import { loadPages, loadWidget } from './assets.js';
import { Guards } from './guards.js';
import { SessionRepo, UsageRepo } from './repo.js';
import { dashboardRoutes } from './routes.js';
import { SessionService } from './sessions.js';

export function dashboardFeature(ctx: AppContext): Feature {
  const sessions = new SessionService(ctx, new SessionRepo(ctx.db));
  const guards = new Guards(ctx, sessions);
  return {
    name: 'dashboard',
    openRestRoutes: dashboardRoutes(ctx, sessions, guards, { pages: loadPages(), widget: loadWidget() }, new UsageRepo(ctx.db)),
    restSession: guards.restSession(),
  };
}
