/**
 * REST: webhook subscriptions (spec "Webhooks", wire-reference §2.10) and, as an extension, the
 * record of delivery attempts at GET /webhooks/{id}/deliveries/.
 *
 * Subscription bodies are the schemas of rest-input.ts, which document them and, through the
 * route seam, answer every bad field at once in the management API's `{"field": ["message"]}` shape.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { deliveryJson, deliverySchema, subscriptionJson, subscriptionSchema } from './json.js';
import type { WebhookService } from './service.js';
import { formOrJsonBody, sendJson } from '../http/common/json.js';
import { checked } from '../http/common/route.js';
import { queryOf, queryParam } from '../http/rest/query.js';
import { notFoundAnswer, restErrorJson, restInput, restRoute } from '../http/rest/route.js';
import { createBody, subscriptionInvalid, unsubscribeBody, updateBody } from './rest-input.js';
import { restErrors } from '../core/error-catalogue/rest.js';

const DUPLICATE = { non_field_errors: ['This project is already subscribed on this event'] };
const notFound = restErrors.notFound;
const WEBHOOKS = ['Webhooks'];

// Not a webhook id: not found, before the body is read.
const idParams = z.object({
  id: checked(z.string(), (raw) => {
    if (!/^\d{1,15}$/.test(raw)) throw notFound();
    return Number(raw);
  }).meta({ description: 'The subscription id.' }),
});

const FORM = ['application/json', 'application/x-www-form-urlencoded'];
const subscriptionBody = <S extends z.ZodType>(schema: S) => ({ schema, contentTypes: FORM, read: formOrJsonBody });

const fieldErrors = z.record(z.string(), z.union([z.array(z.string()), z.string()])).meta({ description: '`{"field": ["message"]}` for every bad field, or `{"detail": …}` for a missing one.' });
// The subscription's existence is checked before these (404 first): the route is
// deferred and the handler validates them after the lookup.
const deliveriesQuery = z.object({
  limit: queryParam.limit(100, 1000),
  before: checked(z.string().optional(), (v) => {
    if (v !== undefined && !/^\d{1,15}$/.test(v)) throw restErrors.beforeNotDeliveryId();
    return v === undefined ? null : Number(v);
  }).meta({ type: 'integer', description: "The `next` link's delivery id: older attempts." }),
});

export function webhookRoutes(ctx: AppContext, webhooks: WebhookService) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    restRoute(
      app,
      { method: 'GET', url: '/webhooks/', tags: WEBHOOKS, summary: "List the project's webhook subscriptions", responses: { 200: { description: 'The subscriptions.', schema: z.array(subscriptionSchema) } } },
      async (req, reply) => {
        const subs = await webhooks.list(req.projectId);
        return sendJson(reply, 200, subs.map(subscriptionJson));
      },
    );

    restRoute(
      app,
      {
        method: 'POST',
        url: '/webhooks/',
        tags: WEBHOOKS,
        summary: 'Subscribe to an event',
        body: subscriptionBody(createBody),
        invalid: subscriptionInvalid,
        responses: { 201: { description: 'The new subscription.', schema: subscriptionSchema }, 400: { description: 'Bad fields, or already subscribed.', schema: fieldErrors } },
      },
      async (req, reply, { body }) => {
        const sub = await webhooks.subscribe(req.projectId, body);
        if (sub === 'duplicate') return sendJson(reply, 400, DUPLICATE);
        return sendJson(reply, 201, subscriptionJson(sub));
      },
    );

    restRoute(
      app,
      {
        method: ['POST', 'DELETE'],
        url: '/webhooks/unsubscribe/',
        tags: WEBHOOKS,
        summary: "Unsubscribe a target URL (from one event, or from all without `event`)",
        body: subscriptionBody(unsubscribeBody),
        invalid: subscriptionInvalid,
        responses: { 204: { description: 'Unsubscribed.' }, 400: { description: 'Bad fields.', schema: fieldErrors } },
      },
      async (req, reply, { body }) => {
        await webhooks.unsubscribe(req.projectId, body.targetUrl, body.event);
        return reply.code(204).send();
      },
    );

    // PUT is the current form; POST on the id is the older documented one.
    restRoute(
      app,
      {
        method: ['PUT', 'POST'],
        url: '/webhooks/:id/',
        tags: WEBHOOKS,
        summary: 'Change a subscription (omitted fields stay)',
        params: idParams,
        body: subscriptionBody(updateBody),
        invalid: subscriptionInvalid,
        responses: { 200: { description: 'The subscription.', schema: subscriptionSchema }, 400: { description: 'Bad fields, or a duplicate.', schema: fieldErrors }, 404: notFoundAnswer('Subscription') },
      },
      async (req: FastifyRequest, reply: FastifyReply, { params, body }) => {
        const sub = await webhooks.update(req.projectId, params.id, body);
        if (!sub) throw notFound();
        if (sub === 'duplicate') return sendJson(reply, 400, DUPLICATE);
        return sendJson(reply, 200, subscriptionJson(sub));
      },
    );

    restRoute(
      app,
      { method: 'DELETE', url: '/webhooks/:id/', tags: WEBHOOKS, summary: 'Delete a subscription', params: idParams, responses: { 204: { description: 'Deleted.' }, 404: notFoundAnswer('Subscription') } },
      async (req, reply, { params }) => {
        if (!(await webhooks.remove(req.projectId, params.id))) throw notFound();
        return reply.code(204).send();
      },
    );

    restRoute(
      app,
      {
        method: 'GET',
        url: '/webhooks/:id/deliveries/',
        tags: WEBHOOKS,
        summary: "A subscription's delivery attempts, newest first",
        params: idParams,
        query: deliveriesQuery,
        deferred: true,
        responses: { 200: { description: 'A page of attempts.', schema: z.object({ next: z.string().nullable(), previous: z.null(), total: z.number().int(), per_page: z.number().int(), results: z.array(deliverySchema) }) }, 400: { description: 'A bad `limit` or `before`.', schema: restErrorJson }, 404: notFoundAnswer('Subscription') },
      },
      async (req, reply, { params: { id } }) => {
        if (!(await webhooks.get(req.projectId, id))) throw notFound();
        const { limit, before: beforeId } = restInput(deliveriesQuery, queryOf(req.query));
        const { rows, total } = await webhooks.deliveries(id, limit + 1, beforeId);
        const page = rows.slice(0, limit);
        const last = page[page.length - 1];
        const next = rows.length > limit && last ? `${ctx.bases.rest}/webhooks/${id}/deliveries/?limit=${limit}&before=${last.id}` : null;
        return sendJson(reply, 200, { next, previous: null, total, per_page: limit, results: page.map(deliveryJson) });
      },
    );
  };
}
