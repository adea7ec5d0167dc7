/**
 * The S3-compatible surface on plain node:http: object bodies stream straight from and to the
 * socket, and the signature check needs the request exactly as it came (raw path, raw query, the
 * client's headers), so no framework sits in between. Every request goes to the one handler the
 * S3 feature contributed (src/s3/); this module only renders what escapes it.
 */
import http from 'node:http';
import https from 'node:https';
import type { AppContext } from '../../context.js';
import { isAppError } from '../../core/errors.js';
import type { S3Handler } from '../../feature.js';
import type { HttpsOptions } from '../common/tls.js';
import { isClientAbort, logClientAbort } from '../common/client-abort.js';
import { insufficientStorage, isOutOfSpace } from '../common/disk-space.js';
import { requestRef } from '../common/request-ref.js';
import { s3Error, sendS3Error } from './errors.js';
import { responseAnsweringId } from '../common/request-id.js';

// Every S3 answer carries its request id as X-Request-Id, as every surface's does, and as
// x-amz-request-id, where S3 clients read it (the SDK's `$metadata.requestId`).
const S3Response = responseAnsweringId(['x-request-id', 'x-amz-request-id']);

export function buildS3Server(ctx: AppContext, tls: HttpsOptions | null, handler: S3Handler | undefined): http.Server {
  const answer: S3Handler =
    handler ??
    (() => {
      throw s3Error(501, 'NotImplemented', 'This node serves no S3 API.');
    });
  const failed = (req: http.IncomingMessage, res: http.ServerResponse, err: unknown): void => {
    if (res.headersSent) return void res.destroy();
    if (isOutOfSpace(err)) err = insufficientStorage(ctx.log, err, requestRef(req, res));
    if (isAppError(err)) return sendS3Error(req, res, err);
    if (isClientAbort(err, req)) return logClientAbort(ctx.log, err, requestRef(req, res));
    ctx.log.error({ err, ...requestRef(req, res) }, 'S3 request failed');
    sendS3Error(req, res, null);
  };
  const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
    // Most small reads are answered at once: no promise unless the handler needed one.
    let pending: Promise<void> | undefined;
    try {
      pending = answer(req, res);
    } catch (err) {
      return failed(req, res, err);
    }
    pending?.catch((err: unknown) => failed(req, res, err));
  };
  // Its answers carry the request id themselves (response.ts).
  return tls ? https.createServer({ ...tls, ServerResponse: S3Response }, listener) : http.createServer({ ServerResponse: S3Response }, listener);
}
