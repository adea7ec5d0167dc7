/**
 * Delivery: rendering stored files, and on nodes that serve the CDN, file URLs. A file request
 * (one typed request, src/http/cdn/url.ts) is answered from the row (the node's file row cache,
 * which may answer a moment old: FileService `recent`) with the original bytes when its plan does
 * no processing, else with a rendition (result cache, bounded work queue: processed.ts). Group members (`nth`) are delivered through the same `deliver`, and
 * copies render through the same `render`; features.ts hands both on.
 */
import path from 'node:path';
import type { AppContext } from '../context.js';
import type { FileRecord } from '../core/file-record.js';
import type { DeliverFile, Feature, ReadOriginal, RenderStoredFile } from '../feature.js';
import { sendCdnError } from '../http/cdn/errors.js';
import { requireCdnAccess } from '../http/cdn/access.js';
import { OriginalsCache } from './originals.js';
import { createProcessedHandler } from './processed.js';
import { sendOriginal } from './raw.js';
import { StoredFileRenderer } from './render-file.js';
import { StoredSources } from './source-file.js';
import { cdnErrors } from '../core/error-catalogue/media.js';

export interface DeliveryFeature extends Feature {
  /** Present on nodes that serve the CDN. */
  deliver: DeliverFile | null;
  render: RenderStoredFile;
  /** Originals from memory for the S3 surface's reads (null answers on nodes that keep none). */
  readOriginal: ReadOriginal;
}

/** `keepOriginals`: the node serves the CDN or the S3 surface, whose reads share the originals cache. */
export async function deliveryFeature(ctx: AppContext, opts: { serveCdn: boolean; keepOriginals: boolean }): Promise<DeliveryFeature> {
  const cfg = ctx.config;
  // Only a node serving reads keeps originals in memory: elsewhere (copies) a render reads the store.
  const originals = new OriginalsCache(ctx.blobs, opts.keepOriginals ? cfg.cdnOriginalsCacheBytes : 0, cfg.cdnOriginalsItemMaxBytes);
  const readOriginal: ReadOriginal = {
    read: async (blobKey, size) => (await originals.get(blobKey, size))?.bytes ?? null,
    held: (blobKey) => originals.held(blobKey)?.bytes ?? null,
  };
  const scratchDir = ctx.blobs.spoolDir ?? path.join(cfg.dataDir, 'spool');
  const renderer = new StoredFileRenderer(ctx.files, new StoredSources(ctx.blobs, originals), scratchDir, ctx.config.cdnRenderTimeoutMs);
  const render: RenderStoredFile = (file, plan) => renderer.render(file, plan);
  if (!opts.serveCdn) return { name: 'delivery', deliver: null, render, readOriginal };

  const processed = await createProcessedHandler(ctx, renderer);
  // Not async: the answer's promise is handed on as is, not wrapped in one more.
  const deliver: DeliverFile = (req, res, file, { plan, filename }) =>
    plan.isProcessing ? processed(req, res, file, plan, filename) : sendOriginal(req, res, originals, file, { filename, inline: plan.inline });
  return {
    name: 'delivery',
    deliver,
    render,
    readOriginal,
    cdn: {
      file: async (req, res, request) => {
        const file = deliverable(await ctx.files.recent(request.uuid));
        if (!file) return sendCdnError(res, cdnErrors.fileNotFound());
        // Awaited only when the project's policy had to be read: a warm request waits on nothing.
        const checking = requireCdnAccess(ctx, req, file.projectId);
        if (checking) await checking;
        await deliver(req, res, file, request);
      },
    },
  };
}

/** The file when it can be delivered: neither removed nor without its bytes. */
function deliverable(file: FileRecord | null): FileRecord | null {
  return file && file.removedUs === null && file.blobKey ? file : null;
}
