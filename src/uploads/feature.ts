/** More upload paths: multipart and from_url (throttling hooks live in src/throttle, wired by the servers). */
import type { AppContext } from '../context.js';
import type { Feature } from '../feature.js';
import { OutboundClient } from '../net/outbound.js';
import { fromUrlRoutes } from './upload-from-url.js';
import { multipartRoutes } from './upload-multipart.js';
import { multipartPartRoute } from './upload-multipart-part.js';
import { fetchJob } from './from-url/fetch-job.js';
import { FROM_URL_FETCH_JOB, FROM_URL_FORGET_JOB, FromUrlTasks } from './from-url/tasks.js';
import { BlobPartStore } from './multipart/part-store.js';
import { S3PartStore } from './multipart/s3-part-store.js';
import { hasLocalFilesAndMove, InPlacePartStore } from './multipart/in-place-part-store.js';
import { MULTIPART_EXPIRE_JOB, MultipartService } from './multipart/service.js';
import { serverSecret } from './server-secret.js';

export function uploadsFeature(ctx: AppContext): Feature {
  // Object storage with presigned multipart: parts go straight to the bucket (multipart/s3-part-store.ts).
  // Disk: parts written in place in the final file (multipart/in-place-part-store.ts).
  const uploadBase = () => ctx.bases.upload;
  const partUrlSecret = () => serverSecret(ctx.db, 'multipart-part-url');
  const partStore = ctx.blobs.multipart
    ? new S3PartStore(ctx.blobs, ctx.blobs.multipart)
    : hasLocalFilesAndMove(ctx.blobs)
      ? new InPlacePartStore(ctx.blobs, uploadBase, partUrlSecret, ctx.config.digestLaterBytes)
      : new BlobPartStore(ctx.blobs, uploadBase, partUrlSecret);
  const multipart = new MultipartService(ctx, partStore);
  const tasks = new FromUrlTasks(ctx.db);
  const client = new OutboundClient({
    allowCidrs: ctx.config.outboundAllow,
    timeoutMs: ctx.config.fromUrlTimeoutMs,
    idleTimeoutMs: 60_000,
    maxBytes: ctx.config.maxUploadBytes,
    maxRedirects: 10,
    userAgent: 'Stowage-from_url',
  });
  return {
    name: 'uploads',
    uploadRoutes: async (app) => {
      await app.register(multipartRoutes(ctx, multipart));
      await app.register(multipartPartRoute(ctx, multipart));
      await app.register(fromUrlRoutes(ctx, tasks, client));
    },
    blobOwners: [
      { prefix: 'multipart/', referenced: (keys) => multipart.referencedKeys(keys, 'multipart/') },
      // A completion that died after assembling left the file under its key; a retry reuses it.
      { prefix: 'files/', referenced: (keys) => multipart.referencedKeys(keys, 'files/') },
    ],
    jobs: {
      [MULTIPART_EXPIRE_JOB]: {
        run: (p) => multipart.expire(p.uuid, p.parts),
      },
      [FROM_URL_FETCH_JOB]: fetchJob(ctx, tasks, client),
      [FROM_URL_FORGET_JOB]: { run: (p) => tasks.forget(p.token) },
    },
  };
}
