/** REST: GET /groups/ (cursor pages like /files/), GET /groups/{id}/, DELETE /groups/{id}/. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { AppError } from '../../core/errors.js';
import { groupSummaryJson, restGroupJson } from '../../groups/json.js';
import type { GroupListQuery } from '../../groups/repo.js';
import { parseGroupId, type GroupService } from '../../groups/service.js';
import { sendJson } from '../common/json.js';
import { pageLinks, userParams } from './pagination.js';
import { dateParam, limitParam, offsetParam, orderingParam, queryOf } from './query.js';

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
      const rows = await groups.repo.list({ ...base, limit: limit + 1, afterUs: from, beforeUs: to });
      // One extra row tells whether a further page exists in the walking direction.
      const walkingBack = to !== null && from === null;
      const more = rows.length > limit;
      const page = more ? (walkingBack ? rows.slice(1) : rows.slice(0, limit)) : rows;
      const first = page[0]?.createdUs ?? null;
      const last = page[page.length - 1]?.createdUs ?? null;
      const hasNext = walkingBack ? last !== null && (await exists(groups, base, last, 'after')) : more;
      const hasPrevious = walkingBack ? more : first !== null && from !== null && (await exists(groups, base, first, 'before'));
      const links = pageLinks(`${ctx.bases.rest}/groups/`, userParams(q), first, last, hasNext, hasPrevious);
      return sendJson(reply, 200, {
        next: links.next,
        previous: links.previous,
        total: await groups.repo.count(req.projectId),
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
      if (!g || !(await groups.repo.delete(req.projectId, g.uuid))) throw notFound();
      return reply.code(204).send();
    });
  };
}

function idOf(req: FastifyRequest): string {
  const id = (req.params as { id: string }).id;
  return parseGroupId(id) ? id : '';
}

async function exists(groups: GroupService, base: Pick<GroupListQuery, 'projectId' | 'desc'>, cursorUs: number, side: 'before' | 'after'): Promise<boolean> {
  const rows = await groups.repo.list({ ...base, limit: 1, afterUs: side === 'after' ? cursorUs : null, beforeUs: side === 'before' ? cursorUs : null });
  return rows.length > 0;
}
