/** tus 1.0.0 resumable uploads on the Upload surface (docs/tus.md). */
import type { AppContext } from '../context.js';
import type { Feature } from '../feature.js';
import { TusService } from './service.js';
import { tusRoutes } from './upload.js';

export const TUS_EXPIRE_JOB = 'tus.expire';

export function tusFeature(ctx: AppContext): Feature {
  const service = new TusService(ctx);
  return {
    name: 'tus',
    uploadRoutes: tusRoutes(ctx, service),
    // A completion writes the file's blob before its row: keep it while the upload is open.
    blobOwners: [{ prefix: 'files/', referenced: (keys) => service.referencedFileKeys(keys) }],
    jobs: { [TUS_EXPIRE_JOB]: { run: async () => void (await service.sweep()) } },
    schedules: [{ kind: TUS_EXPIRE_JOB, periodMs: ctx.config.tusSweepMs, keyOf: (slot) => `tus-expire:${ctx.config.tusSweepMs}:${slot}` }],
  };
}
