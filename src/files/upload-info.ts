/** GET /info/: the upload API's view of one file (wire-reference §1.5). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { FilesContext } from './context.js';
import { parseUuid } from '../core/ids.js';
import { uploadInfoJson } from '../core/file-json.js';
import { sendJson } from '../http/common/json.js';
import { queryParams } from '../http/upload/params.js';
import { RequestProject, runUploadRequest } from '../http/upload/request-flow.js';
import { uploadFieldDocs, uploadRoute } from '../http/upload/route.js';
import { uploadFieldsOf } from '../http/upload/fields.js';
import { parsedField } from '../http/common/route.js';
import { uploadInfoJson as infoSchema } from '../http/common/openapi/wire-schemas.js';
import { uploadErrors } from '../core/error-catalogue/upload.js';

// The key is judged before file_id (403 before 400), so the route is deferred: the handler
// validates file_id with this schema once the project is known.
const infoFields = z.object({
  file_id: parsedField({ type: 'string', format: 'uuid', description: "The file's UUID." }, (v) => {
    if (typeof v !== 'string' || v === '') throw uploadErrors.fileIdRequired();
    const uuid = parseUuid(v);
    if (!uuid) throw uploadErrors.fileIdInvalid();
    return uuid;
  }),
});
const infoQuery = z.object({ pub_key: uploadFieldDocs.pub_key.optional(), ...infoFields.shape, jsonerrors: uploadFieldDocs.jsonerrors });

export function infoRoute(ctx: FilesContext) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    uploadRoute(
      app,
      { method: 'GET', url: '/info/', summary: "A file's upload info", security: [['publicKey']], query: infoQuery, deferred: true, responses: { 200: { description: 'The file.', schema: infoSchema }, 404: { description: 'No such file in the project.' } } },
      async (req, reply) => {
        const params = queryParams(req.query);
        const file = await runUploadRequest(ctx, req, new RequestProject(ctx, params, 'other'), {
          endpoint: null,
          fields: () => uploadFieldsOf(infoFields, params, ctx.config.sdkAliases),
          run: async (project, { file_id: uuid }) => {
            const found = await ctx.files.find(project.id, uuid);
            if (!found || found.removedUs !== null) throw uploadErrors.fileNotFound();
            return found;
          },
        });
        return sendJson(reply, 200, uploadInfoJson(file));
      },
    );
  };
}
