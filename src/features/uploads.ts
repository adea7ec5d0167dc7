/** More upload paths: multipart, from_url (throttling hooks live in src/throttle, wired by the servers). */
import type { AppContext } from '../context.js';
import { OutboundClient } from '../net/outbound.js';
import { fromUrlRoutes } from '../http/upload/from-url.js';
import { multipartRoutes } from '../http/upload/multipart.js';
import { multipartPartRoute } from '../http/upload/multipart-part.js';
import { fetchJob } from '../uploads/from-url/fetch-job.js';
import { FROM_URL_FETCH_JOB, FROM_URL_FORGET_JOB, FromUrlTasks } from '../uploads/from-url/tasks.js';
import { BlobPartStore } from '../uploads/multipart/part-store.js';
import { S3PartStore } from '../uploads/multipart/s3-part-store.js';
import { MULTIPART_EXPIRE_JOB, MultipartService } from '../uploads/multipart/service.js';
import { serverSecret } from '../uploads/server-secret.js';
import type { Feature } from './types.js';

interface Services {
  multipart: MultipartService;
  tasks: FromUrlTasks;
  client: OutboundClient;
}

const services = new WeakMap<AppContext, Services>();

function servicesOf(ctx: AppContext): Services {
  let s = services.get(ctx);
  if (!s) {
    // Object storage with presigned multipart: parts go straight to the bucket (src/uploads/multipart/s3-part-store.ts).
    const store = ctx.blobs.multipart
      ? new S3PartStore(ctx.blobs, ctx.blobs.multipart)
      : new BlobPartStore(ctx.blobs, () => ctx.bases.upload, () => serverSecret(ctx.db.kysely, 'multipart-part-url'));
    s = {
      multipart: new MultipartService(ctx, store),
      tasks: new FromUrlTasks(ctx.db.kysely),
      client: new OutboundClient({
        allowCidrs: ctx.config.outboundAllow,
        timeoutMs: ctx.config.fromUrlTimeoutMs,
        idleTimeoutMs: 60_000,
        maxBytes: ctx.config.maxUploadBytes,
        maxRedirects: 10,
        userAgent: 'Stowage-from_url',
      }),
    };
    services.set(ctx, s);
  }
  return s;
}

export const uploadsFeature: Feature = {
  name: 'uploads',
  register(ctx) {
    const s = servicesOf(ctx);
    ctx.worker.register(MULTIPART_EXPIRE_JOB, {
      run: async (payload) => {
        const p = payload as { uuid: string; parts: number };
        await s.multipart.expire(p.uuid, p.parts);
      },
    });
    ctx.worker.register(FROM_URL_FETCH_JOB, fetchJob(ctx, s.tasks, s.client));
    ctx.worker.register(FROM_URL_FORGET_JOB, { run: async (payload) => s.tasks.forget((payload as { token: string }).token) });
  },
  uploadRoutes(ctx) {
    const s = servicesOf(ctx);
    return async (app) => {
      await app.register(multipartRoutes(ctx, s.multipart));
      await app.register(multipartPartRoute(ctx, s.multipart));
      await app.register(fromUrlRoutes(ctx, s.tasks, s.client));
    };
  },
};
