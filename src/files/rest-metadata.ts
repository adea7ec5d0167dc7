/** REST: file metadata (spec "File metadata"), with the key/value limits enforced by core. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { apiInitiator } from '../jobs/file-events.js';
import type { FilesContext } from './context.js';
import { sendJson } from '../http/common/json.js';
import { parsedField } from '../http/common/route.js';
import { notFoundAnswer, restRoute } from '../http/rest/route.js';
import { fileParams, metadataKeyParams } from './rest-params.js';
import { restErrors } from '../core/error-catalogue/rest.js';

// Reading an unknown or malformed key is a 404 (no such key); writing one is the key's 400.
const keyParams = fileParams.extend({ key: z.string().meta({ description: 'The metadata key.' }) });
const valueBody = parsedField({ type: 'string', description: 'The value, as a JSON string.' }, (v) => {
  if (typeof v !== 'string') throw restErrors.metadataValueNotString();
  return v;
});
const METADATA = ['Metadata'];

export function metadataRoutes(ctx: FilesContext) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    restRoute(
      app,
      { method: 'GET', url: '/files/:uuid/metadata/', tags: METADATA, summary: "A file's metadata", params: fileParams, responses: { 200: { description: 'Every key and value.', schema: z.record(z.string(), z.string()) }, 404: notFoundAnswer('File') } },
      async (req, reply, { params }) => {
        const file = await ctx.files.get(req.projectId, params.uuid);
        return sendJson(reply, 200, file.metadata);
      },
    );

    restRoute(
      app,
      { method: 'GET', url: '/files/:uuid/metadata/:key/', tags: METADATA, summary: 'One metadata value', params: keyParams, responses: { 200: { description: 'The value (a JSON string).', schema: z.string() }, 404: notFoundAnswer('File or key') } },
      async (req, reply, { params: { uuid, key } }) => {
        const file = await ctx.files.get(req.projectId, uuid);
        const value = Object.prototype.hasOwnProperty.call(file.metadata, key) ? file.metadata[key] : undefined;
        if (value === undefined) throw restErrors.notFound();
        return sendJson(reply, 200, value);
      },
    );

    restRoute(
      app,
      {
        method: 'PUT',
        url: '/files/:uuid/metadata/:key/',
        tags: METADATA,
        summary: 'Set one metadata value',
        params: metadataKeyParams,
        body: { schema: valueBody },
        responses: { 200: { description: 'Updated: the value.', schema: z.string() }, 201: { description: 'Created: the value.', schema: z.string() }, 404: notFoundAnswer('File') },
      },
      async (req, reply, { params: { uuid, key }, body }) => {
        const { value, created } = await ctx.files.setMetadataKey(req.projectId, uuid, key, body, apiInitiator(req.id));
        return sendJson(reply, created ? 201 : 200, value);
      },
    );

    restRoute(
      app,
      { method: 'DELETE', url: '/files/:uuid/metadata/:key/', tags: METADATA, summary: 'Delete one metadata key', params: metadataKeyParams, responses: { 204: { description: 'Deleted.' }, 404: notFoundAnswer('File') } },
      async (req, reply, { params: { uuid, key } }) => {
        await ctx.files.deleteMetadataKey(req.projectId, uuid, key, apiInitiator(req.id));
        return reply.code(204).send();
      },
    );
  };
}
