/**
 * Processed delivery of a group member when no processed-delivery extension is registered (the
 * images feature normally serves it, with its cache and work queue): render and send, uncached.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppContext } from '../../context.js';
import type { FileRecord } from '../../core/file-record.js';
import { planOf, processFile } from '../../copies/process.js';
import { sendCdnError } from './errors.js';
import { contentDisposition } from './headers.js';

export async function renderProcessed(ctx: AppContext, req: IncomingMessage, res: ServerResponse, file: FileRecord, ops: string[]): Promise<void> {
  const plan = planOf(ops);
  if (plan.info) return sendCdnError(res, 400, 'Info operations are not available for group members on this server.');
  const out = await processFile(ctx, file, plan, req.headers.accept);
  const headers: Record<string, string | number> = {
    'content-type': out.contentType,
    'content-length': out.body.length,
    'content-disposition': contentDisposition(plan.inline === false ? 'attachment' : 'inline', file.originalFilename),
    'cache-control': 'public, max-age=31536000',
    'access-control-allow-origin': '*',
    'x-image-width': out.width,
    'x-image-height': out.height,
  };
  if (out.varyAccept) headers['vary'] = 'Accept';
  res.writeHead(200, headers);
  res.end(req.method === 'HEAD' ? undefined : out.body);
}
