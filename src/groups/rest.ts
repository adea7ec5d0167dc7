/** REST: GET /groups/ (cursor pages like /files/), GET /groups/{id}/, DELETE /groups/{id}/. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { AppError } from '../core/errors.js';
import { groupSummaryJson, restGroupJson } from './json.js';
import { parseGroupId, type GroupService } from './service.js';
import { sendJson } from '../http/common/json.js';
import { cursorPage, pageLinks, userParams } from '../http/rest/pagination.js';
import { dateParam, limitParam, offsetParam, orderingParam, queryOf } from '../http/rest/query.js';

const notFound = () => new AppError(404, 'NotFound', 'Not found.');

export function groupRestRoutes(ctx: AppContext, groups: GroupService) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    app.get('/groups/', async (req, reply) => {
      const q = queryOf(req.query);
      const limit = limitParam(q);
      const desc = orderingParam(q, 'datetime_created');
      const from = dateParam(q, 'from');
      const to = dateParam(q, 'to');
      offsetParam(q);
      const base = { projectId: req.projectId, desc };
      const { page, firstUs, lastUs, hasNext, hasPrevious } = await cursorPage(
        { limit, fromUs: from, toUs: to },
        (afterUs, beforeUs, n) => groups.list({ ...base, limit: n, afterUs, beforeUs }),
        (g) => g.createdUs,
      );
      const links = pageLinks(`${ctx.bases.rest}/groups/`, userParams(q), firstUs, lastUs, hasNext, hasPrevious);
      return sendJson(reply, 200, {
        next: links.next,
        previous: links.previous,
        total: await groups.count(req.projectId),
        per_page: limit,
        results: page.map((g) => groupSummaryJson(g, ctx.bases)),
      });
    });

    app.get('/groups/:id/', async (req, reply) => {
      const g = await groups.find(req.projectId, idOf(req));
      if (!g) throw notFound();
      return sendJson(reply, 200, restGroupJson(g, await groups.entries(g), ctx.bases));
    });

    app.delete('/groups/:id/', async (req, reply) => {
      const g = await groups.find(req.projectId, idOf(req));
      if (!g || !(await groups.delete(req.projectId, g.uuid))) throw notFound();
      return reply.code(204).send();
    });
  };
}

function idOf(req: FastifyRequest): string {
  const id = (req.params as { id: string }).id;
  return parseGroupId(id) ? id : '';
}

