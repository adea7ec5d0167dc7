/** REST: POST /files/local_copy/ and POST /files/remote_copy/ (wire-reference §2.6). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import type { RenderStoredFile } from '../feature.js';
import { AppError } from '../core/errors.js';
import { validateMetadata } from '../core/metadata.js';
import { localCopy } from './local.js';
import { remoteCopy } from './remote.js';
import { boolField, resolveSource } from './source.js';
import { restFileFor } from '../core/file-json-v06.js';
import { formOrJsonBody, sendJson } from '../http/common/json.js';
import { restRoute } from '../http/rest/route.js';
import { restFileJson as fileSchema } from '../http/common/openapi/wire-schemas.js';

const bad = (message: string) => new AppError(400, 'BadRequest', message);

/*
 * The bodies are read by the handlers: `source` is resolved (a database lookup) before the other
 * fields are checked, and that order decides which error a request with several problems gets.
 */
const FORM = ['application/json', 'application/x-www-form-urlencoded'];
const source = z.string().meta({ description: 'A file UUID or a CDN URL of one (with operations: the copy is rendered).' });
const bool = (description: string) => z.boolean().optional().meta({ description });

const localCopySpec = {
  method: 'POST',
  url: '/files/local_copy/',
  tags: ['Files'],
  summary: 'Copy a file within the project',
  body: {
    schema: z.object({ source, store: bool('Store the copy (default false).'), metadata: z.record(z.string(), z.string()).optional().meta({ description: 'Metadata of the copy.' }) }),
    contentTypes: FORM,
    documentOnly: true,
  },
  responses: { 201: { description: 'The copy.', schema: z.object({ type: z.literal('file'), result: fileSchema }) }, 404: { description: 'Source not found.' } },
} as const;

const remoteCopySpec = {
  method: 'POST',
  url: '/files/remote_copy/',
  tags: ['Files'],
  summary: "Copy a file to one of the project's custom storages",
  body: {
    schema: z.object({
      source,
      target: z.string().meta({ description: 'The custom storage name (`stowage storage add`).' }),
      make_public: bool('Public-read object (default true).'),
      pattern: z.string().optional().meta({ description: 'Object name pattern, e.g. `${default}` (docs/groups.md).' }),
    }),
    contentTypes: FORM,
    documentOnly: true,
  },
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
      const store = boolField(body['store'], 'store', false);
      const metadata = metadataOf(body['metadata']);
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
      const target = body['target'];
      if (target === undefined || target === null || target === '') throw bad('`target` parameter is required.');
      if (typeof target !== 'string') throw bad('Project has no storage with provided name.');
      const makePublic = boolField(body['make_public'], 'make_public', true);
      const pattern = body['pattern'];
      if (pattern !== undefined && pattern !== null && typeof pattern !== 'string') throw bad(`Invalid pattern provided: \`${String(pattern)}\``);
      const result = await remoteCopy(ctx, req.projectId, src, { target, makePublic, pattern: typeof pattern === 'string' ? pattern : null, render });
      return sendJson(reply, result.created ? 201 : 200, { type: 'url', result: result.url });
    });
  };
}

function metadataOf(raw: unknown): Record<string, string> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw bad('`metadata` must be an object of string keys to string values.');
  return validateMetadata(Object.entries(raw as Record<string, unknown>));
}

async function projectOf(ctx: AppContext, projectId: number) {
  const p = await ctx.projects.byId(projectId);
  if (!p) throw new AppError(404, 'NotFound', 'Not found.');
  return p;
}
