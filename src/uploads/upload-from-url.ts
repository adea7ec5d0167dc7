/** POST /from_url/ and GET /from_url/status/ (wire-reference §1.6, §1.7). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import type { OutboundClient } from '../net/outbound.js';
import { requestParams } from './request-params.js';
import type { FromUrlTasks, TaskRow } from './from-url/tasks.js';
import { sendJson } from '../http/common/json.js';
import { uploadInfoJson } from '../core/file-json.js';
import type { Params } from '../http/upload/params.js';
import { flagField, newFileFields, newFileOf, uploadFieldsOf } from '../http/upload/fields.js';
import { checked, parsedField } from '../http/common/route.js';
import { RequestProject, runUploadRequest } from '../http/upload/request-flow.js';
import { FORM_TYPES, uploadFieldDocs, uploadRoute } from '../http/upload/route.js';
import { uploadInfoJson as infoSchema } from '../http/common/openapi/wire-schemas.js';
import { uploadErrors } from '../core/error-catalogue/upload.js';
import { urlErrors } from '../core/error-catalogue/download.js';

const MAX_URL_CHARS = 8192;

const { pub_key, signature, expire, jsonerrors } = uploadFieldDocs;

/*
 * The request's own fields, in the order their errors are reported. Query and body are merged and
 * the key is judged first, so the handler validates them (uploadFieldsOf, before the credentials
 * check); the documented body is built from the same object.
 */
const fromUrlFields = z.object({
  source_url: parsedField({ type: 'string', maxLength: MAX_URL_CHARS, description: 'The http(s) URL to fetch (public addresses only).' }, (v) => {
    const url = typeof v === 'string' ? v.trim() : '';
    if (!url) throw uploadErrors.sourceUrlRequired();
    if (url.length > MAX_URL_CHARS) throw urlErrors.parsingFailed();
    return url;
  }),
  ...newFileFields,
  check_URL_duplicates: flagField('Answer an earlier upload of the same URL instead'),
  save_URL_duplicates: flagField('Remember this URL for later duplicate checks (default: as check_URL_duplicates)'),
  filename: z.string().optional().meta({ description: 'Name of the new file (default: from the URL or its answer).' }),
});

const FROM_URL_SPEC = {
  method: 'POST',
  url: '/from_url/',
  summary: 'Upload a file from a URL',
  description: 'The download runs in the background: poll `/from_url/status/` with the token.',
  query: z.object({ jsonerrors }),
  body: {
    schema: z.object({ pub_key, ...fromUrlFields.shape, signature, expire }),
    contentTypes: FORM_TYPES,
    documentOnly: true,
  },
  responses: {
    200: {
      description: 'A token to poll, or (with `check_URL_duplicates`) the earlier file.',
      schema: z.union([z.object({ type: z.literal('token'), token: z.string() }), infoSchema.extend({ type: z.literal('file_info') })]),
    },
  },
} as const;

/** GET /from_url/status/: `total` is a number or the string "unknown", never null (the SDK divides by it). */
const fromUrlStatusSchema = z.union([
  z.object({ status: z.literal('unknown') }),
  z.object({ status: z.enum(['waiting', 'progress']), done: z.number(), total: z.union([z.number(), z.literal('unknown')]) }),
  z.object({ status: z.literal('error'), error: z.string(), error_code: z.string() }),
  infoSchema.extend({ status: z.literal('success') }),
]);

const STATUS_SPEC = {
  method: 'GET',
  url: '/from_url/status/',
  summary: 'The status of an upload from a URL',
  security: [],
  query: z.object({
    token: checked(z.string().optional(), (v) => {
      if (!v) throw uploadErrors.tokenRequired();
      return v;
    }).meta({ description: 'The token `/from_url/` answered.' }),
    jsonerrors,
  }),
  responses: { 200: { description: '`{status: waiting|progress|success|error|unknown, …}`; with success, the file info.', schema: fromUrlStatusSchema } },
} as const;

export function fromUrlRoutes(ctx: AppContext, tasks: FromUrlTasks, client: OutboundClient) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    uploadRoute(app, FROM_URL_SPEC, async (req, reply) => {
      const params = await requestParams(req);
      const answer = await runUploadRequest(ctx, req, new RequestProject(ctx, params, 'other'), {
        endpoint: '/from_url/',
        fields: () => fromUrlFieldsOf(ctx, params),
        run: async (project, f) => {
          // Syntax, DNS and address checks answer synchronously; download failures go to the status.
          await client.checkUrl(f.sourceUrl);
          if (f.checkDuplicates) {
            const file = await ctx.files.latestFromUrl(project.id, f.sourceUrl);
            if (file) return { type: 'file_info' as const, ...uploadInfoJson(file) };
          }
          const token = await tasks.create(project.id, f.sourceUrl, {
            pubKey: project.pubKey,
            filename: f.filename,
            store: f.store,
            metadata: f.metadata,
            tags: f.tags,
            saveDuplicates: f.saveDuplicates,
            requestId: req.id,
          });
          ctx.worker.poke();
          return { type: 'token' as const, token };
        },
      });
      return sendJson(reply, 200, answer);
    });

    uploadRoute(app, STATUS_SPEC, async (_req, reply, { query: { token } }) => {
      const task = /^[0-9a-f-]{36}$/.test(token) ? await tasks.get(token) : undefined;
      return sendJson(reply, 200, await statusJson(ctx, task));
    });
  };
}

/** The request's own fields, read before the credentials check. */
function fromUrlFieldsOf(ctx: AppContext, params: Params) {
  const f = uploadFieldsOf(fromUrlFields, params, ctx.config.sdkAliases);
  const checkDuplicates = f.check_URL_duplicates ?? false;
  const saveDuplicates = f.save_URL_duplicates ?? checkDuplicates;
  return { sourceUrl: f.source_url, ...newFileOf(f), checkDuplicates, saveDuplicates, filename: f.filename || null };
}

type FromUrlStatusJson = z.output<typeof fromUrlStatusSchema>;

async function statusJson(ctx: AppContext, task: TaskRow | undefined): Promise<FromUrlStatusJson> {
  if (!task) return { status: 'unknown' };
  switch (task.status) {
    case 'waiting':
      // pyuploadcare's progress callback reads `done` and `total` from every answer (KeyError without them).
      return { status: 'waiting', done: 0, total: 'unknown' };
    case 'progress':
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
