/**
 * REST: GET /groups/ (cursor pages like /files/), GET /groups/{id}/, DELETE /groups/{id}/, and
 * v0.6's PUT /groups/{id}/storage/.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { formatCursor } from '../core/time.js';
import { apiInitiator } from '../jobs/file-events.js';
import { requireVersion } from '../http/rest/version.js';
import { groupSummaryJson, groupSummarySchema, restGroupJson, restGroupSchema } from './json.js';
import { parseGroupId, type GroupService } from './service.js';
import { sendJson } from '../http/common/json.js';
import { cursorPage, pageLinks, userParams } from '../http/rest/pagination.js';
import { queryOf, queryParam } from '../http/rest/query.js';
import { checked } from '../http/common/route.js';
import { notFoundAnswer, restRoute } from '../http/rest/route.js';
import { restPage } from '../http/common/openapi/wire-schemas.js';
import { restErrors } from '../core/error-catalogue/rest.js';

const notFound = restErrors.notFound;
const GROUPS = ['Groups'];

// An id that is not a group id names no group: the same 404 as an unknown one.
const groupParams = z.object({
  id: checked(z.string(), (id) => {
    if (!parseGroupId(id)) throw notFound();
    return id;
  }).meta({ type: 'string', pattern: '^[0-9a-fA-F-]{36}~[0-9]{1,4}$', description: 'The group id, `<uuid>~<count>`.' }),
});
// In the order the checks always ran (the first bad one is the one reported).
const listQuery = z.object({
  limit: queryParam.limit(),
  ordering: queryParam.ordering('datetime_created'),
  from: queryParam.date('from', 'Groups created after this time'),
  to: queryParam.date('to', 'Groups created before this time'),
  offset: queryParam.offset(),
});

export function groupRestRoutes(ctx: AppContext, groups: GroupService) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    restRoute(app, { method: 'GET', url: '/groups/', tags: GROUPS, summary: "List the project's groups", query: listQuery, responses: { 200: { description: 'A page of groups.', schema: restPage(groupSummarySchema) } } }, async (req, reply, { query: { limit, ordering: desc, from, to } }) => {
      const q = queryOf(req.query);
      const base = { projectId: req.projectId, desc };
      const { page, first, last, hasNext, hasPrevious } = await cursorPage(
        { limit, from, to },
        (afterUs, beforeUs, n) => groups.list({ ...base, limit: n, afterUs, beforeUs }),
        (g) => g.createdUs,
      );
      const links = pageLinks(`${ctx.bases.rest}/groups/`, userParams(q), first, last, hasNext, hasPrevious, formatCursor);
      return sendJson(reply, 200, {
        next: links.next,
        previous: links.previous,
        total: await groups.count(req.projectId),
        per_page: limit,
        results: page.map((g) => groupSummaryJson(g, ctx.bases)),
      });
    });

    restRoute(app, { method: 'GET', url: '/groups/:id/', tags: GROUPS, summary: "A group's info", params: groupParams, responses: { 200: { description: 'The group with its files.', schema: restGroupSchema }, 404: notFoundAnswer('Group') } }, async (req, reply, { params: { id } }) => {
      const g = await groups.find(req.projectId, id);
      if (!g) throw notFound();
      return sendJson(reply, 200, restGroupJson(g, await groups.entries(g), ctx.bases, req.apiVersion));
    });

    // v0.6 only (v0.7 dropped it): store every live file of the group, answer the group.
    restRoute(app, { method: 'PUT', url: '/groups/:id/storage/', tags: GROUPS, summary: "Store a group's files (API v0.6 only)", params: groupParams, responses: { 200: { description: 'The group with its files.', schema: restGroupSchema }, 404: notFoundAnswer('Group') } }, async (req, reply, { params: { id } }) => {
      requireVersion(req.apiVersion, '0.6');
      const g = await groups.find(req.projectId, id);
      if (!g) throw notFound();
      const live = (await groups.entries(g)).flatMap((e) => (e.file ? [e.file.uuid] : []));
      if (live.length > 0) await ctx.files.batch(req.projectId, [...new Set(live)], 'store', apiInitiator(req.id));
      return sendJson(reply, 200, restGroupJson(g, await groups.entries(g), ctx.bases, req.apiVersion));
    });

    restRoute(app, { method: 'DELETE', url: '/groups/:id/', tags: GROUPS, summary: 'Delete a group (its files stay)', params: groupParams, responses: { 204: { description: 'Deleted.' }, 404: notFoundAnswer('Group') } }, async (req, reply, { params: { id } }) => {
      const g = await groups.find(req.projectId, id);
      if (!g || !(await groups.delete(req.projectId, g.uuid))) throw notFound();
      return reply.code(204).send();
    });
  };
}

