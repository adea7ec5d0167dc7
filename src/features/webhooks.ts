/** Webhook subscriptions, event dispatch and delivery. */
import type { Feature } from './types.js';

export const webhooksFeature: Feature = {
  name: 'webhooks',
};
