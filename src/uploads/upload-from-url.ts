/** POST /from_url/ and GET /from_url/status/ (wire-reference §1.6, §1.7). */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { isAppError } from '../core/errors.js';
import type { OutboundClient } from '../net/outbound.js';
import { requestParams } from './request-params.js';
import type { FromUrlTasks, TaskRow } from './from-url/tasks.js';
import { sendJson } from '../http/common/json.js';
import { uploadInfoJson } from '../core/file-json.js';
import { authorizeUpload } from '../http/upload/credentials.js';
import { uploadError } from '../http/upload/errors.js';
import { flagParam, metadataFields, queryParams, requireProject, storeChoice } from '../http/upload/params.js';

const MAX_URL_CHARS = 8192;

export function fromUrlRoutes(ctx: AppContext, tasks: FromUrlTasks, client: OutboundClient) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    app.post('/from_url/', async (req, reply) => {
      const params = await requestParams(req);
      const found = await requireProject(ctx, params, 'other');
      const sourceUrl = params.get('source_url')?.trim();
      if (!sourceUrl) throw uploadError(400, 'SourceURLRequiredError', 'source_url is required.');
      if (sourceUrl.length > MAX_URL_CHARS) throw uploadError(400, 'URLParsingFailedError', 'Failed to parse URL.');
      const store = storeChoice(ctx, params);
      const metadata = metadataFields(params);
      const checkDuplicates = flagParam(params, 'check_URL_duplicates', false);
      const saveDuplicates = flagParam(params, 'save_URL_duplicates', checkDuplicates);
      // Syntax, DNS and address checks answer synchronously; download failures go to the status.
      await client.checkUrl(sourceUrl);
      const spend = await authorizeUpload(ctx, req, found, params, '/from_url/');
      try {
        if (checkDuplicates) {
          const file = await ctx.files.latestFromUrl(found.project.id, sourceUrl);
          if (file) return sendJson(reply, 200, { type: 'file_info', ...uploadInfoJson(file) });
        }
        const filename = params.get('filename');
        const token = await tasks.create(found.project.id, sourceUrl, {
          pubKey: found.project.pubKey,
          filename: filename ? filename : null,
          store,
          metadata,
          saveDuplicates,
          requestId: req.id,
        });
        ctx.worker.poke();
        return sendJson(reply, 200, { type: 'token', token });
      } catch (err) {
        if (isAppError(err) && err.status < 500) await spend.refund();
        throw err;
      }
    });

    app.get('/from_url/status/', async (req, reply) => {
      const token = queryParams(req.query).get('token');
      if (!token) throw uploadError(400, 'TokenRequiredError', 'token is required.');
      const task = /^[0-9a-f-]{36}$/.test(token) ? await tasks.get(token) : undefined;
      return sendJson(reply, 200, await statusJson(ctx, task));
    });
  };
}

async function statusJson(ctx: AppContext, task: TaskRow | undefined): Promise<Record<string, unknown>> {
  if (!task) return { status: 'unknown' };
  switch (task.status) {
    case 'waiting':
      // pyuploadcare's progress callback reads `done` and `total` from every answer (KeyError without them).
      return { status: 'waiting', done: 0, total: 'unknown' };
    case 'progress':
      // `total` is a number or the string "unknown", never null: the SDK divides by it.
      return { status: 'progress', done: Number(task.done), total: task.total === null ? 'unknown' : Number(task.total) };
    case 'error':
      return { status: 'error', error: task.error ?? 'Upload failed.', error_code: task.error_code ?? 'DownloadFileError' };
    case 'success': {
      const file = task.file_uuid ? await ctx.files.find(Number(task.project_id), task.file_uuid) : null;
      if (!file) return { status: 'unknown' };
      return { ...uploadInfoJson(file), status: 'success' };
    }
  }
}
