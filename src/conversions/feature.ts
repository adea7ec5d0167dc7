/**
 * Conversions: REST /convert/document/… and /convert/video/… (LibreOffice and poppler for
 * documents, ffmpeg for video), run as durable jobs with slots of their own, so a long conversion
 * never takes the shared pool's. `makeGroup` (the groups feature) saves pages and thumbnails as
 * groups; `deliver` (the delivery feature, on CDN nodes) serves conversion URLs.
 */
import type { AppContext } from '../context.js';
import type { DeliverFile, Feature, MakeGroup } from '../feature.js';
import { conversionCdnHandler } from './cdn.js';
import { conversionRoutes } from './rest.js';
import { ConversionService } from './service.js';

export async function conversionsFeature(ctx: AppContext, deps: { makeGroup: MakeGroup; deliver: DeliverFile | null }): Promise<Feature> {
  const service = new ConversionService(ctx, deps.makeGroup);
  await service.sweepWork();
  const leaseMs = 60_000;
  return {
    name: 'conversions',
    restRoutes: conversionRoutes(service),
    ...(deps.deliver && { cdn: { conversion: conversionCdnHandler(ctx, service, deps.deliver) } }),
    jobs: {
      'convert.document': { run: (p, job) => service.run('document', p.token, job), concurrency: ctx.config.convertDocumentConcurrency, leaseMs, retryInMs: () => 5_000 },
      'convert.video': { run: (p, job) => service.run('video', p.token, job), concurrency: ctx.config.convertVideoConcurrency, leaseMs, retryInMs: () => 5_000 },
    },
  };
}
