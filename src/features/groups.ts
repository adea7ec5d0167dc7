/** Groups: upload /group/, REST /groups/, CDN group URLs and archives. */
import type { Feature } from './types.js';

export const groupsFeature: Feature = {
  name: 'groups',
};
