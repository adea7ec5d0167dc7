/** CDN image processing: processed delivery, result cache, bounded work queue. */
import type { Feature } from './types.js';

export const imagesFeature: Feature = {
  name: 'images',
};
