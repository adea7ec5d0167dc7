/** REST: file metadata (spec "File metadata"), with the key/value limits enforced by core. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../core/errors.js';
import { apiInitiator } from '../jobs/file-events.js';
import type { AppContext } from '../context.js';
import { jsonBody, sendJson } from '../http/common/json.js';

export function metadataRoutes(ctx: AppContext) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    app.get('/files/:uuid/metadata/', async (req, reply) => {
      const file = await ctx.files.get(req.projectId, params(req).uuid);
      return sendJson(reply, 200, file.metadata);
    });

    app.get('/files/:uuid/metadata/:key/', async (req, reply) => {
      const { uuid, key } = params(req);
      const file = await ctx.files.get(req.projectId, uuid);
      const value = Object.prototype.hasOwnProperty.call(file.metadata, key) ? file.metadata[key] : undefined;
      if (value === undefined) throw new AppError(404, 'NotFound', 'Not found.');
      return sendJson(reply, 200, value);
    });

    app.put('/files/:uuid/metadata/:key/', async (req, reply) => {
      const { uuid, key } = params(req);
      const body = jsonBody(req);
      if (typeof body !== 'string') throw new AppError(400, 'BadRequest', 'Metadata value must be a JSON string.');
      const { value, created } = await ctx.files.setMetadataKey(req.projectId, uuid, key, body, apiInitiator(req.id));
      return sendJson(reply, created ? 201 : 200, value);
    });

    app.delete('/files/:uuid/metadata/:key/', async (req, reply) => {
      const { uuid, key } = params(req);
      await ctx.files.deleteMetadataKey(req.projectId, uuid, key, apiInitiator(req.id));
      return reply.code(204).send();
    });
  };
}

function params(req: FastifyRequest): { uuid: string; key: string } {
  return req.params as { uuid: string; key: string };
}
