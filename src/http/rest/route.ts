/**
 * REST routes through the description seam (src/http/common/route.ts): JSON bodies, the last value
 * of a repeated query key, a plain `{"detail": …}` 400, and the REST API's auth and error answers
 * documented on every operation.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AppError } from '../../core/errors.js';
import { jsonBody } from '../common/json.js';
import { fieldErrors, parseInput, registerRoute, type InputIssue, type ResponseDoc, type RouteHandler, type SecurityScheme, type SurfaceRouteSpec, type SurfaceInput } from '../common/route.js';
import { queryOf } from './query.js';
import { restErrors } from '../../core/error-catalogue/rest.js';

/** Either REST scheme authorises a call. */
export const REST_SECURITY: ReadonlyArray<readonly SecurityScheme[]> = [['uploadcareSimple'], ['uploadcareSignature']];

/** The REST error body. */
export const restErrorJson = z.object({ detail: z.string() }).meta({ description: 'The error, in words.' });

const surface: SurfaceInput = {
  query: (req) => queryOf(req.query),
  body: jsonBody,
  invalid: restErrors.invalid,
};

/**
 * The media type REST answers are documented with: the versioned type the API's Accept check wants
 * (version.ts), so that clients generated from the document, and the docs page's "Try it out",
 * send it. The neutral spelling, which works whether or not the SDK aliases are on.
 */
export const REST_MEDIA_TYPE = 'application/vnd.svc-v0.7+json';

const errorAnswers: Record<number, string> = {
  401: 'Missing or invalid Authorization (or Date) header.',
  403: 'Refused whatever the credentials: a dashboard session\'s write from another origin, Svc.Simple over plain HTTP.',
  406: 'The Accept header names no supported API version (application/vnd.uploadcare-v0.7+json).',
  429: 'Too many requests for the project: retry after Retry-After seconds.',
};

type Schema = z.ZodType | undefined;

/** Registers a described REST route; it runs after authentication (`req.projectId` is set). */
export function restRoute<P extends Schema = undefined, Q extends Schema = undefined, B extends Schema = undefined>(
  app: FastifyInstance,
  spec: SurfaceRouteSpec<P, Q, B>,
  handler: RouteHandler<P, Q, B>,
): void {
  const responses: Record<number, ResponseDoc> = { ...spec.responses };
  const takesInput = spec.query !== undefined || spec.body !== undefined || spec.params !== undefined;
  if (takesInput && !responses[400]) responses[400] = { description: 'A parameter or the body is invalid.', schema: restErrorJson };
  for (const [status, description] of Object.entries(errorAnswers)) responses[Number(status)] ??= { description, schema: restErrorJson };
  for (const [status, r] of Object.entries(responses)) if (r.schema && (r.contentType ?? 'application/json') === 'application/json') responses[Number(status)] = { ...r, contentType: REST_MEDIA_TYPE };
  registerRoute<P, Q, B>(app, surface, { tags: ['REST'], security: REST_SECURITY, ...spec, responses }, handler);
}

/** A 404 answer with the REST error body. */
export const notFoundAnswer = (what: string): ResponseDoc => ({ description: `${what} not found.`, schema: restErrorJson });

/** Validates REST input the seam could not read before the handler (see `parseInput`). */
export const restInput = <S extends z.ZodType>(schema: S, value: unknown): z.output<S> => parseInput(schema, value, surface);

/** `invalid` for routes answering DRF-style `{"field": ["message"]}` with every bad field. */
export const drfFieldErrors = (issues: readonly InputIssue[]): AppError => restErrors.fieldErrors(fieldErrors(issues));
