/** REST: list, info, store, delete and the batch forms of store and delete. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../core/errors.js';
import { apiInitiator } from '../jobs/file-events.js';
import type { AppContext } from '../context.js';
import { restFileJson } from '../core/file-json.js';
import { jsonBody, sendJson } from '../http/common/json.js';
import { boolParam, dateParam, includeParam, limitParam, offsetParam, orderingParam, queryOf } from '../http/rest/query.js';
import { cursorPage, pageLinks, userParams } from '../http/rest/pagination.js';

const MAX_BATCH = 100;

export function fileRoutes(ctx: AppContext) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    const json = (f: Parameters<typeof restFileJson>[0], appdata = false) => restFileJson(f, ctx.bases, { includeAppdata: appdata });

    app.get('/files/', async (req, reply) => {
      const q = queryOf(req.query);
      const removed = boolParam(q, 'removed') ?? false;
      const stored = boolParam(q, 'stored');
      const limit = limitParam(q);
      const desc = orderingParam(q, 'datetime_uploaded');
      const from = dateParam(q, 'from');
      const to = dateParam(q, 'to');
      offsetParam(q);
      const include = includeParam(q, ['appdata']);
      const base = { projectId: req.projectId, removed, stored, desc };
      const { page, firstUs, lastUs, hasNext, hasPrevious } = await cursorPage(
        { limit, fromUs: from, toUs: to },
        (afterUs, beforeUs, n) => ctx.files.list({ ...base, limit: n, afterUs, beforeUs }),
        (f) => f.uploadedUs,
      );
      const links = pageLinks(`${ctx.bases.rest}/files/`, userParams(q), firstUs, lastUs, hasNext, hasPrevious);
      const [total, totals] = await Promise.all([ctx.files.count({ projectId: req.projectId, removed, stored }), ctx.files.totals(req.projectId)]);
      return sendJson(reply, 200, {
        next: links.next,
        previous: links.previous,
        total,
        totals,
        per_page: limit,
        results: page.map((f) => json(f, include.has('appdata'))),
      });
    });

    app.get('/files/:uuid/', async (req, reply) => {
      const include = includeParam(queryOf(req.query), ['appdata']);
      const file = await ctx.files.get(req.projectId, uuidOf(req));
      return sendJson(reply, 200, json(file, include.has('appdata')));
    });

    app.put('/files/:uuid/storage/', async (req, reply) => {
      const file = await ctx.files.store(req.projectId, uuidOf(req), apiInitiator(req.id));
      return sendJson(reply, 200, json(file, true));
    });

    app.delete('/files/:uuid/storage/', async (req, reply) => {
      const file = await ctx.files.remove(req.projectId, uuidOf(req), apiInitiator(req.id));
      return sendJson(reply, 200, json(file, true));
    });

    for (const [method, action] of [['PUT', 'store'], ['DELETE', 'remove']] as const) {
      app.route({
        method,
        url: '/files/storage/',
        handler: async (req, reply) => {
          const ids = batchIds(jsonBody(req));
          const { problems, result } = await ctx.files.batch(req.projectId, ids, action, apiInitiator(req.id));
          return sendJson(reply, 200, { status: 'ok', problems, result: result.map((f) => json(f, true)) });
        },
      });
    }
  };
}

function uuidOf(req: FastifyRequest): string {
  return (req.params as { uuid: string }).uuid;
}

function batchIds(body: unknown): string[] {
  if (!Array.isArray(body) || body.some((x) => typeof x !== 'string')) throw new AppError(400, 'BadRequest', 'Expected list of UUIDs');
  if (body.length === 0) throw new AppError(400, 'BadRequest', 'List of UUIDs can not be empty');
  if (body.length > MAX_BATCH) throw new AppError(400, 'BadRequest', `Maximum UUIDs per request is exceeded. The limit is ${MAX_BATCH}`);
  return body as string[];
}
