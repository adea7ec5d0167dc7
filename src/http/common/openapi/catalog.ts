/**
 * Every route a surface registers, read from Fastify itself (onRoute), with the description the
 * route seam put in its config. The document is built from this list, so a route without a
 * description cannot hide: it appears flagged `x-stowage-undescribed` (and the coverage test fails).
 */
import type { FastifyInstance } from 'fastify';
import type { Method, RouteDoc } from '../route.js';

export interface CatalogEntry {
  methods: Method[];
  url: string;
  /** The route's config as it ends up (a plugin's own onRoute hook may replace it after ours). */
  config: () => { openapi?: RouteDoc; openRoute?: boolean } | undefined;
}

const DOCUMENTED_METHODS = new Set<string>(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']);

/** Call on the surface's root instance before any route is registered. */
export function routeCatalog(app: FastifyInstance): CatalogEntry[] {
  const entries: CatalogEntry[] = [];
  app.addHook('onRoute', (route) => {
    // Fastify adds a HEAD twin to every GET (exposeHeadRoutes), right after it: the GET documents both.
    if (route.method === 'HEAD' && entries.some((e) => e.url === route.url && e.methods.includes('GET'))) return;
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((m): m is Method => DOCUMENTED_METHODS.has(m));
    if (methods.length === 0) return;
    entries.push({ methods, url: route.url, config: () => route.config as ReturnType<CatalogEntry['config']> });
  });
  return entries;
}
