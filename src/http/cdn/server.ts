/**
 * The CDN surface on plain node:http: it is the hot path, so no framework sits between the socket
 * and the bytes. URL -> target -> (file lookup) -> original or processed delivery.
 */
import http from 'node:http';
import https from 'node:https';
import type { AppContext } from '../../context.js';
import { isAppError } from '../../core/errors.js';
import type { FileRecord } from '../../core/file-record.js';
import type { HttpsOptions } from '../common/tls.js';
import { sendCdnError } from './errors.js';
import { sendOriginal } from './raw.js';
import { CdnUrlError, parseCdnPath, type CdnTarget } from './url.js';
import { FileLookup } from './lookup.js';
import { originalsFor } from './originals.js';
import { splitDeliveryOps } from './delivery-ops.js';

export type CdnFileHandler = (ctx: AppContext, req: http.IncomingMessage, res: http.ServerResponse, file: FileRecord, target: Extract<CdnTarget, { kind: 'file' }>) => Promise<boolean>;
export type CdnGroupHandler = (ctx: AppContext, req: http.IncomingMessage, res: http.ServerResponse, target: Extract<CdnTarget, { kind: 'group' }>) => Promise<void>;

/** Extension points: image processing and groups register here. */
export const cdnExtensions: { processed: CdnFileHandler | null; group: CdnGroupHandler | null } = { processed: null, group: null };

export function buildCdnServer(ctx: AppContext, tls: HttpsOptions | null): http.Server {
  const lookup = new FileLookup(ctx.files.repo);
  ctx.files.onRemoved = (uuid) => lookup.invalidate(uuid);
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    handle(ctx, lookup, req, res).catch((err: unknown) => {
      if (res.headersSent) return void res.destroy();
      if (err instanceof CdnUrlError) return sendCdnError(res, err.status, err.message);
      if (isAppError(err) && err.status < 500) return sendCdnError(res, err.status, err.message, { ...err.headers });
      if (isAppError(err)) return sendCdnError(res, err.status, err.message, { ...err.headers });
      ctx.log.error({ err, url: req.url }, 'CDN request failed');
      sendCdnError(res, 500, 'Internal error.');
    });
  };
  return tls ? https.createServer(tls, handler) : http.createServer(handler);
}

async function handle(ctx: AppContext, lookup: FileLookup, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  if (req.method === 'OPTIONS') {
    res.writeHead(204, {
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'HEAD, GET, OPTIONS',
      'access-control-allow-headers': req.headers['access-control-request-headers'] ?? '*',
      'access-control-max-age': '86400',
    });
    return void res.end();
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') return sendCdnError(res, 405, 'Only GET and HEAD are supported.', { allow: 'GET, HEAD, OPTIONS' });
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  const target = parseCdnPath(path);
  if (target.kind === 'group') {
    if (!cdnExtensions.group) return sendCdnError(res, 404, 'Not found.');
    return cdnExtensions.group(ctx, req, res, target);
  }
  const file = await lookup.get(target.uuid);
  if (!file) return sendCdnError(res, 404, 'File not found.');
  const delivery = splitDeliveryOps(target.ops);
  if (target.special === null && delivery.rest.length === 0) {
    return sendOriginal(req, res, originalsFor(ctx), file, { filename: target.filename, inline: delivery.inline });
  }
  if (cdnExtensions.processed && (await cdnExtensions.processed(ctx, req, res, file, target))) return;
  return sendCdnError(res, 400, 'Image operations are not available on this server.');
}
