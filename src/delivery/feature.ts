/**
 * CDN file delivery: the row (briefly cached), then the original bytes or a processed rendition
 * (result cache, bounded work queue: src/delivery/processed.ts). Group members (`nth`) are
 * delivered through the same `deliver` function, which app.ts hands to the groups feature.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppContext } from '../context.js';
import type { FileRecord } from '../core/file-record.js';
import type { Feature } from '../feature.js';
import { sendCdnError } from '../http/cdn/errors.js';
import { splitDeliveryOps } from './delivery-ops.js';
import { FileLookup } from './lookup.js';
import { originalsFor } from './originals.js';
import { createProcessedHandler } from './processed.js';
import { sendOriginal } from './raw.js';
import type { FileTarget } from '../http/cdn/server.js';

export type DeliverFile = (req: IncomingMessage, res: ServerResponse, file: FileRecord, target: FileTarget) => Promise<void>;

export async function deliveryFeature(ctx: AppContext): Promise<Feature & { deliver: DeliverFile }> {
  const lookup = new FileLookup(ctx.files.repo);
  ctx.files.onRemoved = (uuid) => lookup.invalidate(uuid);
  const processed = await createProcessedHandler(ctx);
  const originals = originalsFor(ctx);

  const deliver: DeliverFile = async (req, res, file, target) => {
    const delivery = splitDeliveryOps(target.ops);
    if (target.special === null && delivery.rest.length === 0) {
      return sendOriginal(req, res, originals, file, { filename: target.filename, inline: delivery.inline });
    }
    return processed(req, res, file, target);
  };

  return {
    name: 'delivery',
    deliver,
    cdn: {
      file: async (req, res, target) => {
        const file = await lookup.get(target.uuid);
        if (!file) return sendCdnError(res, 404, 'File not found.');
        return deliver(req, res, file, target);
      },
    },
  };
}
