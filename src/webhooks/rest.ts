/**
 * REST: webhook subscriptions (spec "Webhooks", wire-reference §2.10) and, as an extension, the
 * record of delivery attempts at GET /webhooks/{id}/deliveries/.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../core/errors.js';
import type { AppContext } from '../context.js';
import { deliveryJson, subscriptionJson } from './json.js';
import type { WebhookService } from './service.js';
import { formOrJsonBody, sendJson } from '../http/common/json.js';
import { limitParam, queryOf } from '../http/rest/query.js';
import { parseCreate, parseUnsubscribe, parseUpdate } from './rest-input.js';

const DUPLICATE = { non_field_errors: ['This project is already subscribed on this event'] };
const notFound = () => new AppError(404, 'NotFound', 'Not found.');

export function webhookRoutes(ctx: AppContext, webhooks: WebhookService) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    app.get('/webhooks/', async (req, reply) => {
      const subs = await webhooks.list(req.projectId);
      return sendJson(reply, 200, subs.map(subscriptionJson));
    });

    app.post('/webhooks/', async (req, reply) => {
      const parsed = parseCreate(formOrJsonBody(req));
      if (!parsed.ok) return sendJson(reply, 400, parsed.body);
      const sub = await webhooks.subscribe(req.projectId, parsed.value);
      if (sub === 'duplicate') return sendJson(reply, 400, DUPLICATE);
      return sendJson(reply, 201, subscriptionJson(sub));
    });

    const unsubscribe = async (req: FastifyRequest, reply: FastifyReply) => {
      const parsed = parseUnsubscribe(formOrJsonBody(req));
      if (!parsed.ok) return sendJson(reply, 400, parsed.body);
      await webhooks.unsubscribe(req.projectId, parsed.value.targetUrl, parsed.value.event);
      return reply.code(204).send();
    };
    app.post('/webhooks/unsubscribe/', unsubscribe);
    app.delete('/webhooks/unsubscribe/', unsubscribe);

    // PUT is the current form; POST on the id is the older documented one.
    const update = async (req: FastifyRequest, reply: FastifyReply) => {
      const id = idOf(req);
      const parsed = parseUpdate(formOrJsonBody(req));
      if (!parsed.ok) return sendJson(reply, 400, parsed.body);
      const sub = await webhooks.update(req.projectId, id, parsed.value);
      if (!sub) throw notFound();
      if (sub === 'duplicate') return sendJson(reply, 400, DUPLICATE);
      return sendJson(reply, 200, subscriptionJson(sub));
    };
    app.put('/webhooks/:id/', update);
    app.post('/webhooks/:id/', update);

    app.delete('/webhooks/:id/', async (req, reply) => {
      const id = idOf(req);
      if (!(await webhooks.remove(req.projectId, id))) throw notFound();
      return reply.code(204).send();
    });

    app.get('/webhooks/:id/deliveries/', async (req, reply) => {
      const id = idOf(req);
      if (!(await webhooks.get(req.projectId, id))) throw notFound();
      const q = queryOf(req.query);
      const limit = limitParam(q, 100, 1000);
      const before = q['before'];
      if (before !== undefined && !/^\d{1,15}$/.test(before)) throw new AppError(400, 'BadRequest', '`before` must be a delivery id.');
      const beforeId = before === undefined ? null : Number(before);
      const { rows, total } = await webhooks.deliveries(id, limit + 1, beforeId);
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      const next = rows.length > limit && last ? `${ctx.bases.rest}/webhooks/${id}/deliveries/?limit=${limit}&before=${last.id}` : null;
      return sendJson(reply, 200, { next, previous: null, total, per_page: limit, results: page.map(deliveryJson) });
    });
  };
}

function idOf(req: FastifyRequest): number {
  const raw = (req.params as { id: string }).id;
  if (!/^\d{1,15}$/.test(raw)) throw notFound();
  return Number(raw);
}
