/**
 * Optional capabilities plug in here, in this order. Each registers its job handlers, routes and
 * CDN extensions before the listeners start.
 */
import type { AppContext } from './context.js';
import type { Feature } from './features/types.js';
import { imagesFeature } from './features/images.js';
import { groupsFeature } from './features/groups.js';
import { uploadsFeature } from './features/uploads.js';
import { webhooksFeature } from './features/webhooks.js';

export const FEATURES: Feature[] = [imagesFeature, groupsFeature, uploadsFeature, webhooksFeature];

export async function registerFeatures(ctx: AppContext): Promise<void> {
  for (const f of FEATURES) await f.register?.(ctx);
}
