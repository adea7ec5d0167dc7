/** REST: GET /project/ (wire-reference §2.9). */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { AppError } from '../core/errors.js';
import { sendJson } from '../http/common/json.js';

export function projectRoutes(ctx: AppContext) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    app.get('/project/', async (req, reply) => {
      const project = (await ctx.projects.list()).find((p) => p.id === req.projectId);
      if (!project) throw new AppError(404, 'NotFound', 'Not found.');
      return sendJson(reply, 200, { collaborators: [], name: project.name, pub_key: project.pubKey, autostore_enabled: project.autostore });
    });
  };
}
