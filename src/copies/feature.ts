/**
 * Copies: REST /files/local_copy/ and /files/remote_copy/ (to a project's custom storages). A CDN
 * URL with operations as the source is rendered by `render`, the delivery feature's function.
 */
import type { AppContext } from '../context.js';
import type { Feature, RenderStoredFile } from '../feature.js';
import { copyRoutes } from './rest.js';

export function copiesFeature(ctx: AppContext, deps: { render: RenderStoredFile }): Feature {
  return { name: 'copies', restRoutes: copyRoutes(ctx, deps.render) };
}
