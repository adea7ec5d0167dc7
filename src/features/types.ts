import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';

export type RoutePlugin = (app: FastifyInstance) => Promise<void>;

/**
 * A capability that plugs into the node: job handlers and CDN extensions in `register`, routes for
 * the REST and Upload surfaces. Each feature lives in its own folder and touches nothing else.
 */
export interface Feature {
  name: string;
  register?(ctx: AppContext): Promise<void> | void;
  restRoutes?(ctx: AppContext): RoutePlugin;
  uploadRoutes?(ctx: AppContext): RoutePlugin;
}
