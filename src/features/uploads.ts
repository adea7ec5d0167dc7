/** More upload paths: multipart, from_url, copies, throttling. */
import type { Feature } from './types.js';

export const uploadsFeature: Feature = {
  name: 'uploads',
};
