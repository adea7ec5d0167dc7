/**
 * Upload API routes through the description seam (src/http/common/route.ts): parameters from the
 * query string (bodies are read by the routes, merged with it), errors rendered as plain text or,
 * with `jsonerrors=1`, as a 200 with `{"error": …}`; the upload auth schemes by default.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseInput, registerRoute, type ResponseDoc, type RouteHandler, type SecurityScheme, type SurfaceRouteSpec, type SurfaceInput } from '../common/route.js';
import { queryParams } from './params.js';
import { uploadErrors } from '../../core/error-catalogue/upload.js';

/** The public key alone, or with a signature or an upload token (when the project signs uploads). */
export const UPLOAD_SECURITY: ReadonlyArray<readonly SecurityScheme[]> = [['publicKey'], ['publicKey', 'signedUpload'], ['publicKey', 'uploadToken']];

/** An Upload API error: plain text with the real status (or a 200 `{"error": …}` with `jsonerrors=1`). */
export const uploadErrorText = z.string().meta({ description: 'The error message, e.g. `pub_key is required.`' });

/** The same error with `jsonerrors=1`: a 200 with this body, whatever the status. */
export const uploadJsonError = z.object({ error: z.object({ status_code: z.number().int(), content: z.string(), error_code: z.string() }) });

const surface: SurfaceInput = {
  query: (req) => Object.fromEntries(queryParams(req.query)),
  body: (req) => req.body,
  invalid: uploadErrors.invalid,
};

const errorAnswers: Record<number, string> = {
  400: 'A parameter is missing or invalid.',
  401: 'The upload token (a Bearer JWT) is invalid or has expired.',
  403: 'The public key is missing or unknown, or the signature or token does not authorise the request.',
  413: 'The request body is larger than the route accepts.',
  429: 'Throttled: retry after Retry-After seconds.',
};

type Schema = z.ZodType | undefined;

/** Registers a described Upload API route. */
export function uploadRoute<P extends Schema = undefined, Q extends Schema = undefined, B extends Schema = undefined>(
  app: FastifyInstance,
  spec: SurfaceRouteSpec<P, Q, B>,
  handler: RouteHandler<P, Q, B>,
): void {
  const responses: Record<number, ResponseDoc> = { ...spec.responses };
  for (const [status, description] of Object.entries(errorAnswers)) responses[Number(status)] ??= { description, schema: uploadErrorText, contentType: 'text/plain' };
  registerRoute<P, Q, B>(app, surface, { tags: ['Upload'], security: UPLOAD_SECURITY, ...spec, responses }, handler);
}


/*
 * Field documentation shared by the Upload routes. Upload API fields come from the query string
 * and the body alike (the body wins); the routes read and check them themselves, in the order the
 * wire's errors depend on (public key first), so these schemas document (`documentOnly`).
 */
/** `jsonerrors`: every route accepts it (errors as a 200 JSON body, for browsers). */
export const jsonErrorsParam = z.string().optional().meta({ description: 'With 1 (or true), errors answer 200 with `{"error": {"status_code", "content", "error_code"}}`.' });

const text = (description: string) => z.string().optional().meta({ description });

export const uploadFieldDocs = {
  pub_key: z.string().meta({ description: "The project's public key." }),
  UPLOADCARE_PUB_KEY: z.string().meta({ description: "The project's public key (also `SVC_PUB_KEY`, or `pub_key`)." }),
  UPLOADCARE_STORE: text('`1`, `0` or `auto` (the project\'s autostore setting; also `SVC_STORE` or `store`).'),
  store: text('`1`, `0` or `auto` (the project\'s autostore setting).'),
  signature: text('Signed uploads: hex HMAC-SHA256 of `expire`, keyed with the secret key.'),
  expire: text('Signed uploads: Unix time after which the signature is refused.'),
  tags: text('Comma-separated tags of the new file (lowercased, trimmed).'),
  metadata: text('`metadata[<key>]=<value>`: one field per metadata key (the key inside the brackets).'),
  jsonerrors: jsonErrorsParam,
};

/** The form media types Upload API routes take. */
export const FORM_TYPES = ['multipart/form-data', 'application/x-www-form-urlencoded'] as const;

/** Validates Upload API fields after the handler read them (multipart, merged with the query; see `parseInput`). */
export const uploadInput = <S extends z.ZodType>(schema: S, value: unknown): z.output<S> => parseInput(schema, value, surface);
