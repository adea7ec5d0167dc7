/**
 * POST /group/ and GET /group/info/ (wire-reference §1.9). Files arrive as `files[]` (repeated,
 * JS SDK), `files[0]`, `files[1]`, … (pyuploadcare; order = index), in multipart, urlencoded or
 * query form; repeated keys matter, so this plugin reads every encoding as an ordered list.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { parseFileRef, type FileRef } from '../http/cdn/file-ref.js';
import { uploadGroupJson, uploadGroupSchema } from './json.js';
import { MAX_GROUP_FILES, type GroupService } from './service.js';
import { sendJson } from '../http/common/json.js';
import { mapMultipartError } from '../http/upload/errors.js';
import { checkNoNulls, type Params } from '../http/upload/params.js';
import { RequestProject, runUploadRequest } from '../http/upload/request-flow.js';
import { uploadFieldsOf } from '../http/upload/fields.js';
import { parsedField } from '../http/common/route.js';
import { FORM_TYPES, uploadFieldDocs, uploadInput, uploadRoute } from '../http/upload/route.js';
import { uploadErrors } from '../core/error-catalogue/upload.js';

type Pairs = Array<[string, string]>;

const { pub_key, signature, expire, jsonerrors } = uploadFieldDocs;

/*
 * Repeated keys matter, so the handler reads every encoding as an ordered list, and validates the
 * files (gathered from `files[]`, `files[N]`, `files`) with this schema after the credentials check.
 */
const createFields = z.object({
  'files[]': parsedField(
    { type: 'array', items: { type: 'string' }, maxItems: MAX_GROUP_FILES, description: 'File UUIDs, each optionally with CDN operations (`<uuid>/-/resize/…/`); also `files[0]`, `files[1]`, … in that order.' },
    (entries) => fileRefs(entries as string[]),
  ),
});

const CREATE_SPEC = {
  method: 'POST',
  url: '/group/',
  summary: 'Make a group of files',
  query: z.object({ jsonerrors }),
  body: {
    schema: z.object({
      pub_key,
      ...createFields.shape,
      signature,
      expire,
    }),
    contentTypes: FORM_TYPES,
    documentOnly: true,
  },
  responses: { 200: { description: 'The group.', schema: uploadGroupSchema } },
} as const;

const infoFields = z.object({
  group_id: parsedField({ type: 'string', description: 'The group id, `<uuid>~<count>`.' }, (v) => {
    if (typeof v !== 'string' || v === '') throw uploadErrors.groupIdRequired();
    return v;
  }),
});

const INFO_SPEC = {
  method: ['GET', 'POST'],
  url: '/group/info/',
  summary: "A group's info",
  security: [['publicKey']],
  query: z.object({ pub_key: pub_key.optional(), group_id: infoFields.shape.group_id.optional(), jsonerrors }),
  // The key is judged first (403 before 400): the handler validates group_id with infoFields.
  deferred: true,
  responses: { 200: { description: 'The group.', schema: uploadGroupSchema }, 404: { description: 'No such group in the project.' } },
} as const;

export function groupRoutes(ctx: AppContext, groups: GroupService) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    // Encapsulated to this plugin: the server-wide urlencoded parser keeps only the last of repeated keys.
    app.removeContentTypeParser('application/x-www-form-urlencoded');
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
      done(null, [...new URLSearchParams(String(body))]);
    });

    uploadRoute(app, CREATE_SPEC, async (req, reply) => {
      const query = queryPairs(req);
      const body = await bodyPairs(req).catch((err: unknown) => {
        throw mapMultipartError(err);
      });
      const params: Params = new Map([...query, ...body]);
      checkNoNulls(params);
      const group = await runUploadRequest(ctx, req, new RequestProject(ctx, params, 'other'), {
        endpoint: '/group/',
        fileCount: 0,
        fields: () => undefined,
        // Entries are read after the credentials check: a stranger's malformed list gets the 403.
        run: async (project) => {
          const refs = uploadInput(createFields, { 'files[]': fileEntries(fileEntries(body).length > 0 ? body : query) })['files[]'];
          const g = await groups.create(project.id, refs, uploadErrors.groupFilesNotFound);
          return uploadGroupJson(g, await groups.entries(g), ctx.bases);
        },
      });
      return sendJson(reply, 200, group);
    });

    const info = async (req: FastifyRequest) => {
      const params: Params = new Map([...queryPairs(req), ...(await bodyPairs(req).catch((err: unknown) => Promise.reject(mapMultipartError(err))))]);
      return runUploadRequest(ctx, req, new RequestProject(ctx, params, 'other'), {
        endpoint: null,
        fields: () => uploadFieldsOf(infoFields, params, ctx.config.sdkAliases),
        run: async (project, { group_id: id }) => {
          const g = await groups.find(project.id, id);
          if (!g) throw uploadErrors.groupNotFound();
          return uploadGroupJson(g, await groups.entries(g), ctx.bases);
        },
      });
    };
    uploadRoute(app, INFO_SPEC, async (req, reply) => sendJson(reply, 200, await info(req)));
  };
}

function queryPairs(req: FastifyRequest): Pairs {
  const q = req.url.indexOf('?');
  return q === -1 ? [] : [...new URLSearchParams(req.url.slice(q + 1))];
}

async function bodyPairs(req: FastifyRequest): Promise<Pairs> {
  if (Array.isArray(req.body)) return req.body as Pairs;
  if (!req.isMultipart()) return [];
  const out: Pairs = [];
  // A full group is 1000 file fields plus a few more; the server-wide field limit is lower.
  for await (const part of req.parts({ limits: { fields: MAX_GROUP_FILES + 20, fieldSize: 8 * 1024, files: 0 } })) {
    if (part.type === 'field' && typeof part.value === 'string') out.push([part.fieldname, part.value]);
  }
  return out;
}

/** `files[]` in order of appearance, `files[N]` in order of N, and a bare `files`. */
function fileEntries(pairs: Pairs): string[] {
  const indexed: Array<[number, string]> = [];
  const listed: string[] = [];
  for (const [k, v] of pairs) {
    if (k === 'files[]' || k === 'files') listed.push(v);
    else {
      const m = /^files\[(\d{1,7})\]$/.exec(k);
      if (m) indexed.push([Number(m[1]), v]);
    }
  }
  indexed.sort((a, b) => a[0] - b[0]);
  return [...indexed.map((e) => e[1]), ...listed];
}

function fileRefs(entries: string[]): FileRef[] {
  if (entries.length === 0) throw uploadErrors.groupFilesMissing();
  if (entries.length > MAX_GROUP_FILES) throw uploadErrors.groupTooManyFiles();
  return entries.map((e) => {
    const ref = parseFileRef(e);
    if (!ref) throw uploadErrors.groupFileUrlInvalid(e);
    return ref;
  });
}
