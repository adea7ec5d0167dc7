/** POST /multipart/start/ and /multipart/complete/ (wire-reference §1.8). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { parseUuid } from '../core/ids.js';
import { requestParams } from './request-params.js';
import { MAX_PART_BYTES, MIN_FILE_BYTES, MIN_PART_BYTES, type MultipartService } from './multipart/service.js';
import { sendJson } from '../http/common/json.js';
import { uploadInfoJson } from '../core/file-json.js';
import { uploadError } from '../http/upload/errors.js';
import { firstOf, metadataFields, requireProject, storeChoice, tagFields, type Params } from '../http/upload/params.js';
import { runUploadRequest } from '../http/upload/request-flow.js';
import { FORM_TYPES, uploadFieldDocs, uploadRoute } from '../http/upload/route.js';
import { uploadInfoJson as infoSchema } from '../http/common/openapi/wire-schemas.js';

const { UPLOADCARE_PUB_KEY, UPLOADCARE_STORE, signature, expire, tags, metadata, jsonerrors } = uploadFieldDocs;

// Fields are read by the handlers (query and body merged, the key judged first), so documented only.
const START_SPEC = {
  method: 'POST',
  url: '/multipart/start/',
  summary: 'Start a multipart upload',
  description: 'Answers one pre-signed URL per part: PUT each part there (any order), then call `/multipart/complete/`.',
  query: z.object({ jsonerrors }),
  body: {
    schema: z.object({
      UPLOADCARE_PUB_KEY,
      filename: z.string().meta({ description: 'Name of the file.' }),
      size: z.string().meta({ description: `Size in bytes (at least ${MIN_FILE_BYTES}).` }),
      content_type: z.string().meta({ description: 'MIME type of the file.' }),
      part_size: z.string().optional().meta({ description: `Bytes per part, ${MIN_PART_BYTES} to ${MAX_PART_BYTES} (default ${MIN_PART_BYTES}).` }),
      UPLOADCARE_STORE,
      signature,
      expire,
      tags,
      'metadata[<key>]': metadata,
    }),
    contentTypes: FORM_TYPES,
    documentOnly: true,
  },
  responses: { 200: { description: 'The upload and its part URLs.', schema: z.object({ uuid: z.string(), parts: z.array(z.string()) }) } },
} as const;

const COMPLETE_SPEC = {
  method: 'POST',
  url: '/multipart/complete/',
  summary: 'Complete a multipart upload',
  security: [['publicKey']],
  query: z.object({ jsonerrors }),
  body: { schema: z.object({ UPLOADCARE_PUB_KEY, uuid: z.string().meta({ description: 'The UUID `/multipart/start/` answered.' }) }), contentTypes: FORM_TYPES, documentOnly: true },
  responses: { 200: { description: 'The new file.', schema: infoSchema } },
} as const;

const required = (name: string) => uploadError(400, 'RequestParamRequiredError', `${name} is required.`);

function intParam(params: Params, name: string, invalid: () => Error): number | undefined {
  const v = params.get(name);
  if (v === undefined || v === '') return undefined;
  if (!/^\d{1,16}$/.test(v.trim())) throw invalid();
  return Number(v.trim());
}

export function multipartRoutes(ctx: AppContext, service: MultipartService) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    uploadRoute(app, START_SPEC, async (req, reply) => {
      const params = await requestParams(req);
      const started = await runUploadRequest(ctx, req, params, {
        endpoint: '/multipart/start/',
        keyLabel: 'base',
        fields: () => startFields(ctx, params),
        run: (project, f) => service.start(project, f),
      });
      return sendJson(reply, 200, started);
    });

    uploadRoute(app, COMPLETE_SPEC, async (req, reply) => {
      const params = await requestParams(req);
      const found = await requireProject(ctx, params, 'base');
      const raw = firstOf(params, ['uuid']);
      if (!raw) throw uploadError(400, 'MultipartFileIdRequiredError', 'uuid is required.');
      const uuid = parseUuid(raw);
      if (!uuid) throw uploadError(400, 'UUIDInvalidError', 'uuid is invalid.');
      const file = await service.complete(found.project, uuid, req.id);
      return sendJson(reply, 200, uploadInfoJson(file));
    });
  };
}

/** /multipart/start/'s own fields, read before the credentials check. */
function startFields(ctx: AppContext, params: Params) {
  const filename = params.get('filename');
  if (!filename) throw required('filename');
  const size = intParam(params, 'size', () => uploadError(400, 'MultipartSizeInvalidError', 'size should be integer.'));
  if (size === undefined) throw required('size');
  if (size < MIN_FILE_BYTES) {
    throw uploadError(400, 'MultipartFileSizeTooSmallError', `File size can not be less than ${MIN_FILE_BYTES} bytes. Please use direct upload instead of multipart.`);
  }
  if (size > ctx.config.maxUploadBytes) throw uploadError(400, 'MultipartFileSizeLimitExceededError', 'File size exceeds project limit.');
  const contentType = params.get('content_type');
  if (!contentType) throw required('content_type');
  const partSize =
    intParam(params, 'part_size', () => uploadError(400, 'MultipartPartSizeInvalidError', 'Multipart Upload Part Size should be an integer.')) ?? MIN_PART_BYTES;
  if (partSize < MIN_PART_BYTES) throw uploadError(400, 'MultipartPartSizeTooSmallError', `Multipart Upload Part Size can not be less than ${MIN_PART_BYTES} bytes.`);
  if (partSize > MAX_PART_BYTES) throw uploadError(400, 'MultipartPartSizeTooBigError', `Multipart Upload Part Size can not be more than ${MAX_PART_BYTES} bytes.`);
  return { filename, contentType: contentType.slice(0, 255), size, partSize, store: storeChoice(ctx, params), metadata: metadataFields(params), tags: tagFields(params) };
}
