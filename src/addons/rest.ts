/** REST: POST /addons/{name}/execute/ and GET /addons/{name}/execute/status/ (wire-reference §2.11). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { jsonBody, sendJson } from '../http/common/json.js';
import { checked, objectBody } from '../http/common/route.js';
import { notFoundAnswer, restInput, restRoute } from '../http/rest/route.js';
import { jsonObject } from '../http/common/openapi/wire-schemas.js';
import { parseUuid } from '../core/ids.js';
import { addonStatusSchema, type AddonService, type ExecuteRequest } from './service.js';
import type { Addon } from './types.js';
import { restErrors } from '../core/error-catalogue/rest.js';

const ADDONS = ['Add-ons'];

/** The add-on named in the path; an unknown name is the 404 before anything else is looked at. */
const nameParams = (addons: AddonService) =>
  z.object({ name: checked(z.string(), (name) => addons.addon(name)).meta({ type: 'string', description: 'The add-on, e.g. `uc_clamav_virus_scan` (docs/addons.md).' }) });

const targetField = checked(z.unknown(), (target): string => {
  if (target === undefined || target === null || target === '') throw restErrors.targetRequired();
  if (typeof target !== 'string') throw restErrors.targetNotString();
  const uuid = parseUuid(target);
  if (!uuid) throw restErrors.targetNotUuid();
  return uuid;
}).meta({ type: 'string', format: 'uuid', description: "The file's UUID." });

/** The execute body for `addon`: its params go through the add-on's own checks (`params.<key>` in the message). */
const executeBody = (addon: Addon) =>
  objectBody(
    {
      target: targetField,
      // Omitted: no params (the add-on's defaults); judged as `{}` by the run.
      params: checked(z.unknown(), (raw) => {
        addon.parseParams(raw);
        return raw;
      }).optional(),
    },
    'Expected JSON object.',
  );
const statusQuery = z.object({
  request_id: checked(z.string().optional(), (v) => {
    if (v === undefined || v === '') throw restErrors.requestIdRequired();
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
        params: nameParams(addons),
        // Documented here; read by the handler with the named add-on's `executeBody`.
        body: { schema: z.object({ target: z.string().meta({ format: 'uuid', description: "The file's UUID." }), params: jsonObject.optional().meta({ description: "The add-on's parameters." }) }), documentOnly: true },
        responses: { 200: { description: 'The execution was queued.', schema: z.object({ request_id: z.string() }) }, 404: notFoundAnswer('Add-on or file') },
      },
      async (req, reply, { params: { name: addon } }) => {
        const body = restInput(executeBody(addon), jsonBody(req));
        const request: ExecuteRequest = { target: body.target, rawParams: body.params ?? {} };
        const requestId = await addons.execute(req.projectId, addon, request);
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
        params: nameParams(addons),
        query: statusQuery,
        responses: { 200: { description: 'in_progress, done, error or unknown (and the result once done).', schema: addonStatusSchema }, 404: notFoundAnswer('Add-on') },
      },
      async (req, reply, { params: { name: addon }, query }) => sendJson(reply, 200, await addons.status(req.projectId, addon.name, query.request_id)),
    );
  };
}
