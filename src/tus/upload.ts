/**
 * The tus 1.0.0 endpoints on the Upload surface (docs/tus.md):
 *   OPTIONS /tus/            capabilities (and CORS preflights)
 *   POST    /tus/            creation (+ creation-with-upload); the public key and the usual upload
 *                            parameters ride in Upload-Metadata and are checked before any byte
 *   HEAD    /tus/{id}        the durable offset
 *   PATCH   /tus/{id}        a chunk (checksum optional)
 *   DELETE  /tus/{id}        termination
 *   GET     /tus/{id}/info/  the file a finished upload made (as /info/ answers it)
 * Every response carries Tus-Resumable; a finished upload's file uuid is in Stowage-File-Uuid.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { AppError, isAppError } from '../core/errors.js';
import { uploadInfoJson } from '../core/file-json.js';
import { sendJson } from '../http/common/json.js';
import { checkNoNulls, queryParams } from '../http/upload/params.js';
import { newFileSchema, uploadFieldsOf } from '../http/upload/fields.js';
import { RequestProject, runUploadRequest } from '../http/upload/request-flow.js';
import { uploadFieldDocs, uploadRoute } from '../http/upload/route.js';
import { uploadInfoJson as infoSchema } from '../http/common/openapi/wire-schemas.js';
import {
  ALLOWED_HEADERS,
  ALLOWED_METHODS,
  CHECKSUM_ALGORITHMS,
  CHUNK_CONTENT_TYPE,
  checkVersion,
  EXPOSED_HEADERS,
  FILE_UUID_HEADER,
  httpDate,
  intHeader,
  parseChecksum,
  parseUploadMetadata,
  TUS_EXTENSIONS,
  TUS_VERSION,
  tusErrors,
} from './protocol.js';
import type { TusService, UploadState } from './service.js';
import { isUploadId } from './staging.js';
import { clientGroup } from './client.js';

interface IdParams {
  id: string;
}

// Headers carry the protocol (docs/tus.md); the handlers check them in the protocol's order.
const TUS = ['tus'];
/** The protocol's refusals (tusErrors), any of which a tus route may answer. */
const TUS_REFUSALS = {
  400: { description: 'A tus header is missing or invalid.' },
  404: { description: 'No such upload, or its file is gone.' },
  409: { description: 'Upload-Offset is not the current offset, or the upload is not complete yet.' },
  410: { description: 'The upload expired.' },
  412: { description: 'Tus-Resumable is missing or not 1.0.0.' },
  413: { description: 'Over the size limit, past Upload-Length, or over the project\'s or client\'s reservation.' },
  415: { description: 'Content-Type is not application/offset+octet-stream.' },
  423: { description: 'Another request is writing this upload.' },
  460: { description: 'Upload-Checksum mismatch.' },
} as const;
const TUS_CREATE = {
  method: 'POST',
  tags: TUS,
  summary: 'tus: create an upload (optionally with its first chunk)',
  description: 'Upload-Length and Upload-Metadata (base64 pairs: `UPLOADCARE_PUB_KEY`, `filename`, `filetype`, `UPLOADCARE_STORE`, `metadata[…]`, `signature`, `expire`) headers; the upload is at the Location answered.',
  query: z.object({ jsonerrors: uploadFieldDocs.jsonerrors }),
  body: { schema: z.string().meta({ format: 'binary' }), contentTypes: [CHUNK_CONTENT_TYPE], documentOnly: true },
  responses: { ...TUS_REFUSALS, 201: { description: 'Created: Location, and Upload-Offset with a first chunk.' } },
} as const;
const TUS_BY_ID = {
  url: '/tus/:id',
  tags: TUS,
  // The upload's id (in its URL) is the credential after creation.
  security: [],
  params: z.object({ id: z.string().meta({ description: 'The upload, from the Location answered at creation.' }) }),
} as const;

export function tusRoutes(ctx: AppContext, service: TusService) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    // Chunks are streamed by the handlers, whatever their declared type; Fastify parses nothing.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));

    app.addHook('onRequest', async (req, reply) => {
      reply.header('tus-resumable', TUS_VERSION).header('access-control-expose-headers', EXPOSED_HEADERS);
    });

    const options = async (req: FastifyRequest, reply: FastifyReply) => {
      const asked = req.headers['access-control-request-headers'];
      return reply
        .header('tus-version', TUS_VERSION)
        .header('tus-extension', TUS_EXTENSIONS)
        .header('tus-max-size', String(ctx.config.maxUploadBytes))
        .header('tus-checksum-algorithm', CHECKSUM_ALGORITHMS.join(','))
        .header('access-control-allow-methods', ALLOWED_METHODS)
        .header('access-control-allow-headers', typeof asked === 'string' ? asked : ALLOWED_HEADERS)
        .header('access-control-max-age', '86400')
        .code(204)
        .send();
    };
    app.options('/tus', options);
    app.options('/tus/', options);
    app.options('/tus/:id', options);

    const create = async (req: FastifyRequest, reply: FastifyReply) => {
      checkVersion(req.headers['tus-resumable']);
      const state = await createUpload(ctx, service, req);
      const location = `${ctx.bases.upload}/tus/${state.row.id}`;
      let done = state;
      if (hasBody(req)) {
        try {
          done = await service.write(state.row.id, req.raw, chunkOf(req, 0), req.id);
        } catch (err) {
          // The upload exists: the client can still resume it from the Location.
          if (isAppError(err)) throw new AppError(err.status, err.code, err.message, { ...err.headers, location });
          throw err;
        }
        reply.header('upload-offset', String(done.row.received));
      }
      return describe(reply, done).header('location', location).code(201).send();
    };
    for (const url of ['/tus', '/tus/']) uploadRoute(app, { ...TUS_CREATE, url }, create);

    const head = async (req: FastifyRequest<{ Params: IdParams }>, reply: FastifyReply) => {
      checkVersion(req.headers['tus-resumable']);
      const state = await service.status(uploadId(req), req.id);
      reply.header('upload-offset', String(state.row.received)).header('upload-length', String(state.row.length)).header('cache-control', 'no-store');
      if (state.row.upload_metadata) reply.header('upload-metadata', state.row.upload_metadata);
      return describe(reply, state).code(200).send();
    };

    const patch = async (req: FastifyRequest<{ Params: IdParams }>, reply: FastifyReply) => {
      checkVersion(req.headers['tus-resumable']);
      const id = uploadId(req);
      if (!isChunk(req)) throw tusErrors.contentType();
      const offset = intHeader(req.headers['upload-offset'], 'Upload-Offset');
      if (offset === undefined) throw tusErrors.badHeader('Upload-Offset');
      const state = await service.write(id, req.raw, chunkOf(req, offset), req.id);
      return describe(reply, state).header('upload-offset', String(state.row.received)).code(204).send();
    };

    const terminate = async (req: FastifyRequest<{ Params: IdParams }>, reply: FastifyReply) => {
      checkVersion(req.headers['tus-resumable']);
      await service.terminate(uploadId(req));
      return reply.code(204).send();
    };

    const byId = (req: FastifyRequest) => req as FastifyRequest<{ Params: IdParams }>;
    uploadRoute(app, { ...TUS_BY_ID, method: 'HEAD', summary: 'tus: the durable offset of an upload', responses: { ...TUS_REFUSALS, 200: { description: 'Upload-Offset and Upload-Length headers.' } } }, (req, reply) => head(byId(req), reply));
    uploadRoute(
      app,
      {
        ...TUS_BY_ID,
        method: 'PATCH',
        summary: 'tus: append a chunk at Upload-Offset',
        body: { schema: z.string().meta({ format: 'binary' }), contentTypes: [CHUNK_CONTENT_TYPE], documentOnly: true },
        responses: { ...TUS_REFUSALS, 204: { description: 'Written durably: the new Upload-Offset header.' } },
      },
      (req, reply) => patch(byId(req), reply),
    );
    uploadRoute(app, { ...TUS_BY_ID, method: 'DELETE', summary: 'tus: terminate an upload', responses: { ...TUS_REFUSALS, 204: { description: 'Terminated.' } } }, (req, reply) => terminate(byId(req), reply));
    // Clients behind proxies that allow only GET and POST send X-HTTP-Method-Override.
    uploadRoute(app, { ...TUS_BY_ID, method: 'POST', summary: 'tus: PATCH, DELETE or HEAD through X-HTTP-Method-Override', responses: { ...TUS_REFUSALS, 204: { description: 'As the overridden method.' }, 200: { description: 'As HEAD.' } } }, async (rawReq, reply) => {
      const req = byId(rawReq);
      const method = String(req.headers['x-http-method-override'] ?? '').toUpperCase();
      if (method === 'PATCH') return patch(req, reply);
      if (method === 'DELETE') return terminate(req, reply);
      if (method === 'HEAD') return head(req, reply);
      throw tusErrors.notFound();
    });

    uploadRoute(
      app,
      { ...TUS_BY_ID, method: 'GET', url: '/tus/:id/info/', summary: 'tus: the file a finished upload made', responses: { ...TUS_REFUSALS, 200: { description: 'As /info/ answers it.', schema: infoSchema }, 404: { description: 'No such upload, or not finished.' } } },
      async (req, reply) => sendJson(reply, 200, uploadInfoJson(await service.info(uploadId(byId(req))))),
    );
  };
}

/** Reads Upload-Length and Upload-Metadata, then authenticates and records the upload (no byte read yet). */
async function createUpload(ctx: AppContext, service: TusService, req: FastifyRequest): Promise<UploadState> {
  if (req.headers['upload-defer-length'] !== undefined && req.headers['upload-length'] === undefined) throw tusErrors.lengthRequired();
  const length = intHeader(req.headers['upload-length'], 'Upload-Length');
  if (length === undefined) throw tusErrors.lengthRequired();
  if (length > ctx.config.maxUploadBytes) throw tusErrors.tooLarge();
  const rawMetadata = typeof req.headers['upload-metadata'] === 'string' ? req.headers['upload-metadata'] : '';
  const meta = parseUploadMetadata(req.headers['upload-metadata']);
  // The usual upload parameters (public key, store, signature, metadata[…]): query string, then Upload-Metadata.
  const params = queryParams(req.query);
  for (const [k, v] of meta) params.set(k, v);
  checkNoNulls(params);
  if (hasBody(req)) {
    if (!isChunk(req)) throw tusErrors.contentType();
    parseChecksum(req.headers['upload-checksum']);
  }
  return runUploadRequest(ctx, req, new RequestProject(ctx, params, 'base'), {
    endpoint: '/tus/',
    fields: () => ({
      length,
      uploadMetadata: rawMetadata,
      filename: meta.get('filename') || meta.get('name') || undefined,
      contentType: (meta.get('filetype') || meta.get('content_type') || meta.get('type') || 'application/octet-stream').slice(0, 255),
      ...uploadFieldsOf(newFileSchema, params, ctx.config.sdkAliases),
      client: clientGroup(req.ip),
    }),
    run: (project, fields) => service.create(project, fields, req.id),
  });
}

function uploadId(req: FastifyRequest<{ Params: IdParams }>): string {
  const id = req.params.id.toLowerCase();
  if (!isUploadId(id)) throw tusErrors.notFound();
  return id;
}

function chunkOf(req: FastifyRequest, offset: number) {
  const declared = Number(req.headers['content-length']);
  return {
    offset,
    declaredLength: req.headers['content-length'] !== undefined && Number.isSafeInteger(declared) ? declared : undefined,
    checksum: parseChecksum(req.headers['upload-checksum']),
  };
}

function hasBody(req: FastifyRequest): boolean {
  const len = req.headers['content-length'];
  return (len !== undefined && len !== '0') || req.headers['transfer-encoding'] !== undefined;
}

function isChunk(req: FastifyRequest): boolean {
  return (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() === CHUNK_CONTENT_TYPE;
}

/** Upload-Expires while unfinished; the file's uuid once finished. */
function describe(reply: FastifyReply, state: UploadState): FastifyReply {
  if (state.row.state === 'open') reply.header('upload-expires', httpDate(Number(state.row.expires_us)));
  if (state.file) reply.header(FILE_UUID_HEADER, state.file.uuid);
  return reply;
}
