/**
 * CDN conversion URLs: `/<uuid>/document/-/format/pdf/` or `/<uuid>/video/…/` answer the result
 * of the newest finished conversion of that file to the same target (the hosted service addresses
 * results "by their new UUID, as well as the URL with the operations of the request"). Nothing is
 * converted on a CDN request: until a REST conversion has finished, the URL answers 404.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppContext } from '../context.js';
import type { DeliverFile } from '../feature.js';
import { requireCdnAccess } from '../http/cdn/access.js';
import type { ConversionRequest } from '../feature.js';
import { parsePlan } from '../media/plan.js';
import type { ConversionService } from './service.js';
import { cdnErrors } from '../core/error-catalogue/media.js';

const NO_OPERATIONS = parsePlan([]);

export function conversionCdnHandler(ctx: AppContext, service: ConversionService, deliver: DeliverFile) {
  return async (req: IncomingMessage, res: ServerResponse, request: ConversionRequest): Promise<void> => {
    const found = await service.resultFor(request.conversion, request.uuid, request.path);
    if (!found) throw cdnErrors.fileNotFound();
    await requireCdnAccess(ctx, req, found.source.projectId);
    if (!found.result) throw cdnErrors.notConverted();
    return deliver(req, res, found.result, { plan: NO_OPERATIONS, filename: request.filename });
  };
}
