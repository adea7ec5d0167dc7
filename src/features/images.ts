/** CDN image processing: processed delivery, result cache, bounded work queue (src/http/cdn/processed.ts). */
import { cdnExtensions } from '../http/cdn/server.js';
import { createProcessedHandler } from '../http/cdn/processed.js';
import type { Feature } from './types.js';

export const imagesFeature: Feature = {
  name: 'images',
  async register(ctx) {
    // Only a node that serves the CDN needs the pipeline and the cache directory.
    if (ctx.config.only.includes('cdn')) cdnExtensions.processed = await createProcessedHandler(ctx);
  },
};
