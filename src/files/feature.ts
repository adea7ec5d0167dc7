/**
 * Files: REST files, metadata and project; Upload /base/ and /info/; reclaiming the bytes of
 * removed files and expiring unstored ones.
 */
import type { FilesContext } from './context.js';
import { BLOB_DELETE_JOB, DIGEST_LATER_JOB, EXPIRY_SWEEP_JOB } from './service.js';
import type { Feature } from '../feature.js';
import { fileInfoAnswers, fileRoutes } from './rest-files.js';
import { fileInfoQuickRead } from './info-quick-read.js';
import { metadataRoutes } from './rest-metadata.js';
import { projectRoutes } from './rest-project.js';
import { tagRoutes } from './rest-tags.js';
import { searchRoutes } from './rest-search.js';
import { baseRoute } from './upload-base.js';
import { infoRoute } from './upload-info.js';

export function filesFeature(ctx: FilesContext): Feature {
  const infoAnswer = fileInfoAnswers(ctx);
  const batches = ctx.files.readBatchStats();
  if (batches) {
    ctx.metrics.counterOf('stowage_file_reads_batched_total', 'File lookups by uuid sent through the batched read since the node started (PostgreSQL; db/read-batcher.ts)', () => batches.asked);
    ctx.metrics.counterOf('stowage_file_read_batches_total', 'Queries those batched lookups took', () => batches.batches);
  }
  const lists = ctx.files.listBatchStats();
  if (lists) {
    ctx.metrics.counterOf('stowage_file_list_pages_batched_total', 'Pages of the file list read with their counters through the batched read since the node started (PostgreSQL; files/list/batched/repo.ts)', () => lists.asked);
    ctx.metrics.counterOf('stowage_file_list_page_batches_total', 'Statements those batched pages took', () => lists.batches);
  }
  return {
    name: 'files',
    restRoutes: async (app) => {
      await app.register(fileRoutes(ctx, infoAnswer));
      await app.register(metadataRoutes(ctx));
      await app.register(projectRoutes(ctx));
      await app.register(tagRoutes(ctx));
      await app.register(searchRoutes(ctx));
    },
    restQuickReads: [fileInfoQuickRead(ctx.files, infoAnswer)],
    uploadRoutes: async (app) => {
      await app.register(baseRoute(ctx));
      await app.register(infoRoute(ctx));
    },
    blobOwners: [{ prefix: 'files/', referenced: (keys) => ctx.files.referencedBlobKeys(keys) }],
    jobs: {
      [BLOB_DELETE_JOB]: {
        run: (p) => ctx.files.reclaimBytes(p.projectId, p.uuid, p.blobKey, p.removedUs),
      },
      [DIGEST_LATER_JOB]: {
        // Reads the whole file (about 3 s of CPU per GiB, in the digest threads): two at a time per node.
        concurrency: 2,
        run: (p) => ctx.files.digestLater(p.projectId, p.uuid, p.blobKey),
      },
      [EXPIRY_SWEEP_JOB]: {
        leaseMs: 10 * 60 * 1000,
        run: async () => {
          const n = await ctx.files.expireUnstored(ctx.config.unstoredTtlMs);
          if (n > 0) ctx.log.info({ expired: n }, 'expired unstored files');
        },
      },
    },
    schedules: [{ kind: EXPIRY_SWEEP_JOB, periodMs: ctx.config.expirySweepMs, keyOf: (slot) => `expiry:${ctx.config.expirySweepMs}:${slot}` }],
  };
}
