/** REST: POST /files/local_copy/ and POST /files/remote_copy/ (wire-reference §2.6). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import type { RenderStoredFile } from '../feature.js';
import { validateMetadata } from '../core/metadata.js';
import { localCopy } from './local.js';
import { remoteCopy } from './remote.js';
import { boolField, resolveSource } from './source.js';
import { restFileFor } from '../core/file-json-v06.js';
import { formOrJsonBody, sendJson } from '../http/common/json.js';
import { parsedField } from '../http/common/route.js';
import { restInput, restRoute } from '../http/rest/route.js';
import { anyRestFileSchema as fileSchema } from '../http/common/openapi/wire-schemas.js';
import { restErrors } from '../core/error-catalogue/rest.js';
import { restFieldErrors } from '../core/error-catalogue/rest-fields.js';


/*
 * The bodies' schemas document every field and validate all but `source`, but the seam does not
 * run them first: `source` is resolved (a database lookup) before the other fields are checked,
 * and that order decides which error a request with several problems gets. So the handlers
 * resolve the source, then validate the rest with the same schemas (`restInput`).
 */
const FORM = ['application/json', 'application/x-www-form-urlencoded'];
const source = z.string().meta({ description: 'A file UUID or a CDN URL of one (with operations: the copy is rendered).' });
/** `true`/`false` (JSON or strings); absent or null: the default. */
const bool = (name: string, def: boolean, description: string) =>
  parsedField({ type: 'boolean', description }, (v) => boolField(v, name, def))
    .optional()
    .transform((v) => v ?? def);

const localFields = z.object({
  store: bool('store', false, 'Store the copy (default false).'),
  metadata: parsedField({ type: 'object', additionalProperties: { type: 'string' }, description: 'Metadata of the copy.' }, metadataOf).optional(),
});

const remoteFields = z.object({
  target: parsedField({ type: 'string', description: 'The custom storage name (`stowage storage add`).' }, (v) => {
    if (v === undefined || v === null || v === '') throw restFieldErrors.targetParamRequired();
    if (typeof v !== 'string') throw restErrors.copyNoSuchStorage();
    return v;
  }),
  make_public: bool('make_public', true, 'Public-read object (default true).'),
  pattern: parsedField({ type: 'string', description: 'Object name pattern, e.g. `${default}` (docs/groups.md).' }, (v) => {
    if (v !== undefined && v !== null && typeof v !== 'string') throw restErrors.copyPatternInvalid(String(v));
    return typeof v === 'string' ? v : null;
  }).optional(),
});

const localCopySpec = {
  method: 'POST',
  url: '/files/local_copy/',
  tags: ['Files'],
  summary: 'Copy a file within the project',
  body: { schema: z.object({ source, ...localFields.shape }), contentTypes: FORM, documentOnly: true },
  responses: { 201: { description: 'The copy.', schema: z.object({ type: z.literal('file'), result: fileSchema }) }, 404: { description: 'Source not found.' } },
} as const;

const remoteCopySpec = {
  method: 'POST',
  url: '/files/remote_copy/',
  tags: ['Files'],
  summary: "Copy a file to one of the project's custom storages",
  body: { schema: z.object({ source, ...remoteFields.shape }), contentTypes: FORM, documentOnly: true },
  responses: {
    200: { description: 'Already there: its URL.', schema: z.object({ type: z.literal('url'), result: z.string() }) },
    201: { description: 'Copied: its URL.', schema: z.object({ type: z.literal('url'), result: z.string() }) },
    404: { description: 'Source not found.' },
  },
} as const;

/** `render`: the delivery feature's renderer, for sources with operations. */
export function copyRoutes(ctx: AppContext, render: RenderStoredFile) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    restRoute(app, localCopySpec, async (req, reply) => {
      const body = formOrJsonBody(req);
      const src = await resolveSource(ctx, req.projectId, body['source']);
      const { store, metadata = {} } = restInput(localFields, body);
      const project = await projectOf(ctx, req.projectId);
      const initiator = { type: 'api' as const, detail: { request_id: req.id, addon_name: null, source_file_uuid: src.file.uuid } };
      const file = await localCopy(ctx, project, src, { store, metadata, initiator, render });
      ctx.worker.poke();
      reply.header('location', `${ctx.bases.rest}/files/${file.uuid}/`);
      return sendJson(reply, 201, { type: 'file', result: restFileFor(req.apiVersion, file, ctx.bases) });
    });

    restRoute(app, remoteCopySpec, async (req, reply) => {
      const body = formOrJsonBody(req);
      const src = await resolveSource(ctx, req.projectId, body['source']);
      const { target, make_public: makePublic, pattern = null } = restInput(remoteFields, body);
      const result = await remoteCopy(ctx, req.projectId, src, { target, makePublic, pattern, render });
      return sendJson(reply, result.created ? 201 : 200, { type: 'url', result: result.url });
    });
  };
}

function metadataOf(raw: unknown): Record<string, string> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw restFieldErrors.metadataNotObject();
  return validateMetadata(Object.entries(raw as Record<string, unknown>));
}

async function projectOf(ctx: AppContext, projectId: number) {
  const p = await ctx.projects.byId(projectId);
  if (!p) throw restErrors.notFound();
  return p;
}
