/** GET /info/: the upload API's view of one file (wire-reference §1.5). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { parseUuid } from '../core/ids.js';
import { uploadInfoJson } from '../core/file-json.js';
import { uploadError } from '../http/upload/errors.js';
import { sendJson } from '../http/common/json.js';
import { queryParams, requireProject } from '../http/upload/params.js';
import { uploadFieldDocs, uploadRoute } from '../http/upload/route.js';
import { uploadInfoJson as infoSchema } from '../http/common/openapi/wire-schemas.js';

// Strings only: the key is judged before file_id (403 before 400), by the handler.
const infoQuery = z.object({ pub_key: uploadFieldDocs.pub_key.optional(), file_id: z.string().optional().meta({ description: "The file's UUID." }), jsonerrors: uploadFieldDocs.jsonerrors });

export function infoRoute(ctx: AppContext) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    uploadRoute(
      app,
      { method: 'GET', url: '/info/', summary: "A file's upload info", security: [['publicKey']], query: infoQuery, responses: { 200: { description: 'The file.', schema: infoSchema }, 404: { description: 'No such file in the project.' } } },
      async (req, reply) => {
        const params = queryParams(req.query);
        const found = await requireProject(ctx, params, 'other');
        const raw = params.get('file_id');
        if (!raw) throw uploadError(400, 'FileIdRequiredError', 'file_id is required.');
        const uuid = parseUuid(raw);
        if (!uuid) throw uploadError(400, 'FileIdInvalidError', 'file_id is invalid.');
        const file = await ctx.files.find(found.project.id, uuid);
        if (!file || file.removedUs !== null) throw uploadError(404, 'FileNotFoundError', 'File is not found.');
        return sendJson(reply, 200, uploadInfoJson(file));
      },
    );
  };
}
