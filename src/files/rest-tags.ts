/**
 * REST: file tags (wire-reference §2.13, JS rest-client getTags / replaceTags / updateTags):
 *   GET   /files/{uuid}/tags/  -> {"tags": […]}
 *   PUT   /files/{uuid}/tags/  {"tags": […]} replaces (empty clears)     -> {"tags", "added", "deleted"}
 *   PATCH /files/{uuid}/tags/  {"add": […], "delete": […]}, delete first -> same
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { normalizeTags } from '../core/tags.js';
import { apiInitiator } from '../jobs/file-events.js';
import type { FilesContext } from './context.js';
import { sendJson } from '../http/common/json.js';
import { objectBody, parsedField } from '../http/common/route.js';
import { notFoundAnswer, restRoute } from '../http/rest/route.js';
import { fileParams } from './rest-params.js';
import { restErrors } from '../core/error-catalogue/rest.js';

const TAG_LIST = { type: 'array', items: { type: 'string' } };

/** A tag list field: missing or null is no tags, anything else is normalised (400 naming `name`). */
const tagList = (name: string, description: string) =>
  parsedField({ ...TAG_LIST, description }, (v) => (v === undefined || v === null ? [] : normalizeTags(v, name))).optional();

const replaceBody = objectBody({
  tags: parsedField({ ...TAG_LIST, description: 'The new tags (empty clears).' }, (v) => {
    if (v === undefined) throw restErrors.tagsRequired();
    return normalizeTags(v, 'tags');
  }),
});

const changeBody = objectBody({
  add: tagList('add', 'Tags to add.'),
  delete: tagList('delete', 'Tags to remove (applied before `add`).'),
});

const tagsJson = z.object({ tags: z.array(z.string()) });
const changeJson = z.object({ tags: z.array(z.string()), added: z.array(z.string()), deleted: z.array(z.string()) });
const TAGS = ['Tags'];

export function tagRoutes(ctx: FilesContext) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    restRoute(
      app,
      { method: 'GET', url: '/files/:uuid/tags/', tags: TAGS, summary: "A file's tags", params: fileParams, responses: { 200: { description: 'The tags.', schema: tagsJson }, 404: notFoundAnswer('File') } },
      async (req, reply, { params }) => {
        const file = await ctx.files.get(req.projectId, params.uuid);
        return sendJson(reply, 200, { tags: file.tags });
      },
    );

    restRoute(
      app,
      {
        method: 'PUT',
        url: '/files/:uuid/tags/',
        tags: TAGS,
        summary: "Replace a file's tags",
        params: fileParams,
        body: { schema: replaceBody },
        responses: { 200: { description: 'The tags now, and what changed.', schema: changeJson }, 404: notFoundAnswer('File') },
      },
      async (req, reply, { params, body }) => {
        const change = await ctx.files.changeTags(req.projectId, params.uuid, { replace: body.tags }, apiInitiator(req.id));
        return sendJson(reply, 200, change);
      },
    );

    restRoute(
      app,
      {
        method: 'PATCH',
        url: '/files/:uuid/tags/',
        tags: TAGS,
        summary: "Add and remove some of a file's tags",
        params: fileParams,
        body: { schema: changeBody },
        responses: { 200: { description: 'The tags now, and what changed.', schema: changeJson }, 404: notFoundAnswer('File') },
      },
      async (req, reply, { params, body }) => {
        const change = await ctx.files.changeTags(req.projectId, params.uuid, { add: body.add ?? [], delete: body.delete ?? [] }, apiInitiator(req.id));
        return sendJson(reply, 200, change);
      },
    );
  };
}
