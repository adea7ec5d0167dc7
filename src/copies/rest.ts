/** REST: POST /files/local_copy/ and POST /files/remote_copy/ (wire-reference §2.6). */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import type { RenderStoredFile } from '../feature.js';
import { AppError } from '../core/errors.js';
import { validateMetadata } from '../core/metadata.js';
import { localCopy } from './local.js';
import { remoteCopy } from './remote.js';
import { boolField, resolveSource } from './source.js';
import { restFileJson } from '../core/file-json.js';
import { formOrJsonBody, sendJson } from '../http/common/json.js';

const bad = (message: string) => new AppError(400, 'BadRequest', message);

/** `render`: the delivery feature's renderer, for sources with operations. */
export function copyRoutes(ctx: AppContext, render: RenderStoredFile) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    app.post('/files/local_copy/', async (req, reply) => {
      const body = formOrJsonBody(req);
      const src = await resolveSource(ctx, req.projectId, body['source']);
      const store = boolField(body['store'], 'store', false);
      const metadata = metadataOf(body['metadata']);
      const project = await projectOf(ctx, req.projectId);
      const initiator = { type: 'api' as const, detail: { request_id: req.id, addon_name: null, source_file_uuid: src.file.uuid } };
      const file = await localCopy(ctx, project, src, { store, metadata, initiator, render });
      ctx.worker.poke();
      reply.header('location', `${ctx.bases.rest}/files/${file.uuid}/`);
      return sendJson(reply, 201, { type: 'file', result: restFileJson(file, ctx.bases) });
    });

    app.post('/files/remote_copy/', async (req, reply) => {
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
