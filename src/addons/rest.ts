/** REST: POST /addons/{name}/execute/ and GET /addons/{name}/execute/status/ (wire-reference §2.11). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AppError } from '../core/errors.js';
import { jsonBody, sendJson } from '../http/common/json.js';
import { checked } from '../http/common/route.js';
import { notFoundAnswer, restRoute } from '../http/rest/route.js';
import { jsonObject } from '../http/common/openapi/wire-schemas.js';
import type { AddonService } from './service.js';

const ADDONS = ['Add-ons'];
const nameParams = z.object({ name: z.string().meta({ description: 'The add-on, e.g. `uc_clamav_virus_scan` (docs/addons.md).' }) });
const statusQuery = z.object({
  request_id: checked(z.string().optional(), (v) => {
    if (v === undefined || v === '') throw new AppError(400, 'BadRequest', '`request_id` is required.');
    return v;
  }).meta({ description: 'The `request_id` the execute call answered.' }),
});

export function addonRoutes(addons: AddonService) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    restRoute(
      app,
      {
        method: 'POST',
        url: '/addons/:name/execute/',
        tags: ADDONS,
        summary: 'Run an add-on on a file',
        params: nameParams,
        // The add-on checks its own params (paramsObject refuses unknown keys), naming `params.<key>`.
        body: { schema: z.object({ target: z.string().meta({ description: "The file's UUID." }), params: jsonObject.optional().meta({ description: "The add-on's parameters." }) }), documentOnly: true },
        responses: { 200: { description: 'The execution was queued.', schema: z.object({ request_id: z.string() }) }, 404: notFoundAnswer('Add-on or file') },
      },
      async (req, reply, { params }) => {
        const requestId = await addons.execute(req.projectId, params.name, jsonBody(req));
        // The public service answers the add-on POSTs with plain application/json.
        return sendJson(reply, 200, { request_id: requestId });
      },
    );

    restRoute(
      app,
      {
        method: 'GET',
        url: '/addons/:name/execute/status/',
        tags: ADDONS,
        summary: "An add-on execution's status",
        params: nameParams,
        query: statusQuery,
        responses: { 200: { description: 'in_progress, done, error or unknown (and the result once done).', schema: jsonObject }, 404: notFoundAnswer('Add-on') },
      },
      async (req, reply, { params, query }) => sendJson(reply, 200, await addons.status(req.projectId, params.name, query.request_id)),
    );
  };
}
