/**
 * The composition root of features: which features a node runs, in which order, and which
 * service of one feature another one is handed. Each feature folder's `feature.ts` returns what it
 * contributes (src/feature.ts); app.ts gives those contributions to the servers and the worker.
 */
import type { AppContext } from './context.js';
import type { Feature } from './feature.js';
import type { FileService } from './files/service.js';
import { conversionsFeature } from './conversions/feature.js';
import { copiesFeature } from './copies/feature.js';
import { deliveryFeature } from './delivery/feature.js';
import { filesFeature } from './files/feature.js';
import { groupsFeature } from './groups/feature.js';
import { uploadsFeature } from './uploads/feature.js';
import { webhooksFeature } from './webhooks/feature.js';
import { addonsFeature } from './addons/feature.js';
import { tusFeature } from './tus/feature.js';
import { dashboardFeature } from './dashboard/feature.js';
import { s3Feature } from './s3/feature.js';

export async function createFeatures(ctx: AppContext<FileService>): Promise<Feature[]> {
  // Every node renders (copies with operations); only a CDN node serves files and keeps a cache.
  const only = ctx.config.only;
  const delivery = await deliveryFeature(ctx, { serveCdn: only.includes('cdn'), keepOriginals: only.includes('cdn') || only.includes('s3') });
  const groups = groupsFeature(ctx, { deliver: delivery.deliver });
  return [
    filesFeature(ctx),
    delivery,
    groups,
    copiesFeature(ctx, { render: delivery.render }),
    uploadsFeature(ctx),
    tusFeature(ctx),
    webhooksFeature(ctx),
    addonsFeature(ctx),
    await conversionsFeature(ctx, { makeGroup: groups.makeGroup, deliver: delivery.deliver }),
    dashboardFeature(ctx),
    s3Feature(ctx, { readOriginal: delivery.readOriginal }),
  ];
}
