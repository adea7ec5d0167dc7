/** GET /info/: the upload API's view of one file (wire-reference §1.5). */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { parseUuid } from '../core/ids.js';
import { uploadInfoJson } from '../core/file-json.js';
import { uploadError } from '../http/upload/errors.js';
import { sendJson } from '../http/common/json.js';
import { queryParams, requireProject } from '../http/upload/params.js';

export function infoRoute(ctx: AppContext) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    app.get('/info/', async (req, reply) => {
      const params = queryParams(req.query);
      const found = await requireProject(ctx, params, 'other');
      const raw = params.get('file_id');
      if (!raw) throw uploadError(400, 'FileIdRequiredError', 'file_id is required.');
      const uuid = parseUuid(raw);
      if (!uuid) throw uploadError(400, 'FileIdInvalidError', 'file_id is invalid.');
      const file = await ctx.files.find(found.project.id, uuid);
      if (!file || file.removedUs !== null) throw uploadError(404, 'FileNotFoundError', 'File is not found.');
      return sendJson(reply, 200, uploadInfoJson(file));
    });
  };
}
