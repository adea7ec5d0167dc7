/** POST /multipart/start/ and /multipart/complete/ (wire-reference §1.8). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { parseUuid } from '../core/ids.js';
import { requestParams } from './request-params.js';
import { MAX_PART_BYTES, MIN_FILE_BYTES, MIN_PART_BYTES, type MultipartService } from './multipart/service.js';
import { sendJson } from '../http/common/json.js';
import { uploadInfoJson } from '../core/file-json.js';
import type { Params } from '../http/upload/params.js';
import { newFileFields, newFileOf, uploadFieldsOf } from '../http/upload/fields.js';
import { checked, parsedField } from '../http/common/route.js';
import { RequestProject, runUploadRequest } from '../http/upload/request-flow.js';
import { FORM_TYPES, uploadFieldDocs, uploadRoute } from '../http/upload/route.js';
import { uploadInfoJson as infoSchema } from '../http/common/openapi/wire-schemas.js';
import { uploadErrors } from '../core/error-catalogue/upload.js';

const { UPLOADCARE_PUB_KEY, signature, expire, jsonerrors } = uploadFieldDocs;

const required = uploadErrors.paramRequired;

/** An integer field: undefined when absent or empty, `invalid` when not digits. */
function intOf(v: unknown, invalid: () => Error): number | undefined {
  if (typeof v !== 'string' || v === '') return undefined;
  if (!/^\d{1,16}$/.test(v.trim())) throw invalid();
  return Number(v.trim());
}

/** A required text field: absent or empty answers `<name> is required.`. */
const requiredText = (name: string, description: string) =>
  parsedField({ type: 'string', description }, (v) => {
    if (typeof v !== 'string' || v === '') throw required(name);
    return v;
  });

/*
 * /multipart/start/'s own fields, in the order their errors are reported. Query and body are
 * merged and the key is judged first, so the handler validates them (uploadFieldsOf, before the
 * credentials check); the documented body is built from the same object. The size limit is the
 * configured one, so the object is made per server.
 */
const startFields = (maxUploadBytes: number) =>
  z.object({
    filename: requiredText('filename', 'Name of the file.'),
    size: parsedField({ type: 'integer', minimum: MIN_FILE_BYTES, description: `Size in bytes (at least ${MIN_FILE_BYTES}).` }, (v) => {
      const size = intOf(v, uploadErrors.multipartSizeInvalid);
      if (size === undefined) throw required('size');
      if (size < MIN_FILE_BYTES) {
        throw uploadErrors.multipartFileTooSmall(MIN_FILE_BYTES);
      }
      if (size > maxUploadBytes) throw uploadErrors.multipartFileTooLarge();
      return size;
    }),
    content_type: requiredText('content_type', 'MIME type of the file.'),
    part_size: checked(z.string().optional(), (v) => {
      const partSize = intOf(v, uploadErrors.partSizeInvalid) ?? MIN_PART_BYTES;
      if (partSize < MIN_PART_BYTES) throw uploadErrors.partSizeTooSmall(MIN_PART_BYTES);
      if (partSize > MAX_PART_BYTES) throw uploadErrors.partSizeTooBig(MAX_PART_BYTES);
      return partSize;
    }).meta({ type: 'integer', minimum: MIN_PART_BYTES, maximum: MAX_PART_BYTES, description: `Bytes per part, ${MIN_PART_BYTES} to ${MAX_PART_BYTES} (default ${MIN_PART_BYTES}).` }),
    ...newFileFields,
  });

/** /multipart/complete/'s field, validated after the key is judged. */
const completeFields = z.object({
  uuid: parsedField({ type: 'string', format: 'uuid', description: 'The UUID `/multipart/start/` answered.' }, (v) => {
    if (typeof v !== 'string' || v === '') throw uploadErrors.multipartIdRequired();
    const uuid = parseUuid(v);
    if (!uuid) throw uploadErrors.multipartIdInvalid();
    return uuid;
  }),
});

const startSpec = (maxUploadBytes: number) =>
  ({
    method: 'POST',
    url: '/multipart/start/',
    summary: 'Start a multipart upload',
    description: 'Answers one pre-signed URL per part: PUT each part there (any order), then call `/multipart/complete/`.',
    query: z.object({ jsonerrors }),
    body: { schema: z.object({ UPLOADCARE_PUB_KEY, ...startFields(maxUploadBytes).shape, signature, expire }), contentTypes: FORM_TYPES, documentOnly: true },
    responses: { 200: { description: 'The upload and its part URLs.', schema: z.object({ uuid: z.string(), parts: z.array(z.string()) }) } },
  }) as const;

const COMPLETE_SPEC = {
  method: 'POST',
  url: '/multipart/complete/',
  summary: 'Complete a multipart upload',
  security: [['publicKey']],
  query: z.object({ jsonerrors }),
  body: { schema: z.object({ UPLOADCARE_PUB_KEY, ...completeFields.shape }), contentTypes: FORM_TYPES, documentOnly: true },
  responses: { 200: { description: 'The new file.', schema: infoSchema }, 404: { description: 'No such multipart upload in the project (or it expired).' } },
} as const;

export function multipartRoutes(ctx: AppContext, service: MultipartService) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    const start = startFields(ctx.config.maxUploadBytes);
    uploadRoute(app, startSpec(ctx.config.maxUploadBytes), async (req, reply) => {
      const params = await requestParams(req);
      const started = await runUploadRequest(ctx, req, new RequestProject(ctx, params, 'base'), {
        endpoint: '/multipart/start/',
        fields: () => startFieldsOf(ctx, start, params),
        run: (project, f) => service.start(project, f),
      });
      return sendJson(reply, 200, started);
    });

    uploadRoute(app, COMPLETE_SPEC, async (req, reply) => {
      const params = await requestParams(req);
      const file = await runUploadRequest(ctx, req, new RequestProject(ctx, params, 'base'), {
        endpoint: null,
        fields: () => uploadFieldsOf(completeFields, params, ctx.config.sdkAliases),
        run: (project, { uuid }) => service.complete(project, uuid, req.id),
      });
      return sendJson(reply, 200, uploadInfoJson(file));
    });
  };
}

/** /multipart/start/'s own fields, read before the credentials check. */
function startFieldsOf(ctx: AppContext, schema: ReturnType<typeof startFields>, params: Params) {
  const f = uploadFieldsOf(schema, params, ctx.config.sdkAliases);
  return { filename: f.filename, contentType: f.content_type.slice(0, 255), size: f.size, partSize: f.part_size, ...newFileOf(f) };
}
