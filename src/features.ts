/**
 * Optional capabilities plug in here: each registers its job handlers, upload plugins and CDN
 * extensions on the context before the listeners start.
 */
import type { AppContext } from './context.js';

export async function registerFeatures(_ctx: AppContext): Promise<void> {
  // Image processing, groups, multipart, from_url and webhooks register themselves here.
}
