/**
 * REST: POST /convert/document/ and /convert/video/, their status by token, and
 * GET /convert/document/{uuid}/ (wire-reference §2.12). The POSTs answer `application/json`, as
 * the public service does for conversions.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseBoolean, REST_API_BOOLEANS } from '../core/booleans.js';
import { sendJson } from '../http/common/json.js';
import { checked, objectBody, parsedField, uuidText } from '../http/common/route.js';
import { notFoundAnswer, restRoute } from '../http/rest/route.js';
import { documentInfoSchema, statusSchema, submittedSchema } from './json.js';
import type { ConversionKind, ConversionService } from './service.js';
import { restErrors } from '../core/error-catalogue/rest.js';
import { restFieldErrors } from '../core/error-catalogue/rest-fields.js';

const conversionNotFound = restErrors.notFound;
/** A conversion's token is the number the submit answered; anything else names none (404). */
const tokenParams = z.object({
  token: checked(z.string(), (v) => {
    if (!/^\d{1,15}$/.test(v)) throw conversionNotFound();
    return Number(v);
  }).meta({ type: 'string', pattern: '^\\d{1,15}$', description: 'The token the conversion answered.' }),
});
const documentParams = z.object({ uuid: uuidText(conversionNotFound, "The file's UUID.") });

const REST_JSON = 'application/vnd.uploadcare-v0.7+json';
/** More paths than this in one request is refused (each becomes a job). */
export const MAX_PATHS = 100;
const CONVERSIONS = ['Conversions'];

const pathsField = parsedField(
  { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: MAX_PATHS, description: 'Conversion paths: `<uuid>/document/-/format/<format>/…` or `<uuid>/video/-/format/<format>/…` (docs/conversions.md).' },
  (paths) => {
    if (paths === undefined || paths === null || (Array.isArray(paths) && paths.length === 0)) throw restFieldErrors.pathsRequired();
    if (!Array.isArray(paths)) throw restFieldErrors.pathsNotList();
    if (paths.length > MAX_PATHS) throw restFieldErrors.pathsTooMany(MAX_PATHS);
    return paths as string[];
  },
);
const storeField = parsedField({ type: 'boolean', description: "Store the results (absent: the project's autostore setting)." }, (v) => {
  const b = boolField(v, 'store');
  return b === undefined ? 'auto' : b ? '1' : '0';
}).optional();

const bodies = {
  document: objectBody(
    { paths: pathsField, store: storeField, save_in_group: parsedField({ type: 'boolean', description: 'Save every page in a group.' }, (v) => boolField(v, 'save_in_group') === true).optional() },
    'Expected JSON object.',
  ),
  video: objectBody({ paths: pathsField, store: storeField }, 'Expected JSON object.'),
} satisfies Record<ConversionKind, z.ZodType>;

const submitJson = z.object({ problems: z.record(z.string(), z.string()), result: z.array(submittedSchema) });

export function conversionRoutes(service: ConversionService) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    for (const kind of ['document', 'video'] as const satisfies readonly ConversionKind[]) {
      restRoute(
        app,
        {
          method: 'POST',
          url: `/convert/${kind}/`,
          tags: CONVERSIONS,
          summary: `Convert ${kind}s`,
          body: { schema: bodies[kind] as z.ZodType<{ paths: string[]; store?: 'auto' | '1' | '0'; save_in_group?: boolean }> },
          responses: { 200: { description: 'A job per accepted path, a problem per refused one.', schema: submitJson } },
        },
        async (req, reply, { body }) => {
          const out = await service.submit(kind, req.projectId, body.paths, { store: body.store ?? 'auto', saveInGroup: body.save_in_group === true });
          return sendJson(reply, 200, { problems: out.problems, result: out.result });
        },
      );

      restRoute(
        app,
        {
          method: 'GET',
          url: `/convert/${kind}/status/:token/`,
          tags: CONVERSIONS,
          summary: `A ${kind} conversion's status`,
          params: tokenParams,
          responses: { 200: { description: 'pending, processing, finished, failed or cancelled, with the result.', schema: statusSchema, contentType: REST_JSON }, 404: notFoundAnswer('Conversion') },
        },
        async (req, reply, { params }) => sendJson(reply, 200, await service.status(kind, req.projectId, params.token), REST_JSON),
      );
    }

    restRoute(
      app,
      {
        method: 'GET',
        url: '/convert/document/:uuid/',
        tags: CONVERSIONS,
        summary: "A document's format and the formats it converts to",
        params: documentParams,
        responses: { 200: { description: 'The format and conversion targets.', schema: documentInfoSchema, contentType: REST_JSON }, 404: notFoundAnswer('File') },
      },
      async (req, reply, { params }) => sendJson(reply, 200, await service.documentInfo(req.projectId, params.uuid), REST_JSON),
    );
  };
}

function boolField(value: unknown, name: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  const b = parseBoolean(value, REST_API_BOOLEANS);
  if (b === undefined) throw restFieldErrors.paramNotTrueOrFalse(name);
  return b;
}
