/**
 * The route-description seam (docs/openapi.md): a route declares its method, path, summary, auth,
 * input schemas and responses (zod) next to its handler. Registration uses that one description
 * twice: to validate the input before the handler runs, and (through the route's Fastify config,
 * read by the OpenAPI catalog) to build the surface's /openapi.json. There is no second list of routes.
 *
 * A schema answers the wire's exact errors: a field that must fail with a given status, code and
 * message reports it with `failWith(ctx, appError)` (or `checked(...)` around an existing parser),
 * and the seam throws that AppError. An issue without one becomes the surface's plain 400.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AppError, isAppError } from '../../core/errors.js';
import { parseUuid } from '../../core/ids.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';

/** Security schemes of the two documents (src/http/common/openapi/document.ts defines them). */
export type SecurityScheme = 'uploadcareSimple' | 'uploadcareSignature' | 'publicKey' | 'signedUpload' | 'uploadToken';

export interface ResponseDoc {
  description: string;
  /** The body's schema (JSON unless `contentType` says otherwise); none for an empty body. */
  schema?: z.ZodType;
  contentType?: string;
}

export interface BodySpec<B extends z.ZodType> {
  schema: B;
  /** Media types the route accepts (default application/json). */
  contentTypes?: readonly string[];
  /**
   * Documented only: the handler reads and checks the body itself (streamed multipart uploads,
   * fields merged with the query string). `input.body` is then undefined.
   */
  documentOnly?: boolean;
  /** How to read the body before validation (default: the surface's reader, JSON on REST). */
  read?: (req: FastifyRequest) => unknown;
}

export interface RouteDoc {
  summary: string;
  description?: string;
  /** Groups of operations in the docs page. */
  tags: readonly string[];
  /** Alternatives, any one of which authorises the call; each is a set of schemes used together. `[]`: public. */
  security: ReadonlyArray<readonly SecurityScheme[]>;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: BodySpec<z.ZodType>;
  responses: Readonly<Record<number, ResponseDoc>>;
  /**
   * Answers every query and body issue at once (the management API's `{"field": ["message"]}`),
   * instead of the first one's error. Path parameters still fail first, on their own.
   */
  invalid?: (issues: readonly InputIssue[]) => AppError;
  /**
   * The query and body schemas are documented here but run by the handler (`inputIssues`,
   * `parseInput`), because checks that need them parsed (cross-field, a lookup) answer in the same
   * error. `input.query` and `input.body` are then undefined; path parameters are still parsed.
   */
  deferred?: boolean;
  /** Served but left out of the document (the document and its page themselves). */
  hidden?: boolean;
  operationId?: string;
}

/** One failed input field: its name (the first path segment), message and wire code if any. */
export interface InputIssue {
  field: string;
  message: string;
  /** The AppError code the field reported (`failWith`, `checked`), if it did. */
  code?: string;
}

type Schema = z.ZodType | undefined;
type Out<S extends Schema> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteSpec<P extends Schema, Q extends Schema, B extends Schema> extends Omit<RouteDoc, 'params' | 'query' | 'body'> {
  method: Method | readonly Method[];
  url: string;
  params?: P;
  query?: Q;
  body?: B extends z.ZodType ? BodySpec<B> : undefined;
}

/** A route's description as a surface's helper (restRoute, uploadRoute) takes it: that surface supplies the security and tags it leaves out. */
export type SurfaceRouteSpec<P extends Schema, Q extends Schema, B extends Schema> = Omit<RouteSpec<P, Q, B>, 'security' | 'tags'> & {
  security?: RouteSpec<P, Q, B>['security'];
  tags?: readonly string[];
};

export interface RouteInput<P extends Schema, Q extends Schema, B extends Schema> {
  params: Out<P>;
  query: Out<Q>;
  body: Out<B>;
}

export type RouteHandler<P extends Schema, Q extends Schema, B extends Schema> = (
  req: FastifyRequest,
  reply: FastifyReply,
  input: RouteInput<P, Q, B>,
) => Promise<unknown>;

/** What differs between the REST and Upload surfaces when reading and refusing input. */
export interface SurfaceInput {
  /** The query object (repeated keys: the last value). */
  query(req: FastifyRequest): Record<string, string | undefined>;
  /** The body when the route does not say how to read it. */
  body(req: FastifyRequest): unknown;
  /** The error for an issue that carries no AppError of its own. */
  invalid(message: string): AppError;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's description, read by the OpenAPI catalog (src/http/common/openapi/catalog.ts). */
    openapi?: RouteDoc;
  }
}

/** Registers one described route on `app`, validating its input with the description's schemas. */
export function registerRoute<P extends Schema, Q extends Schema, B extends Schema>(
  app: FastifyInstance,
  surface: SurfaceInput,
  spec: RouteSpec<P, Q, B>,
  handler: RouteHandler<P, Q, B>,
): void {
  const { method, url, ...doc } = spec;
  const methods = typeof method === 'string' ? [method] : [...method];
  const body = spec.body as BodySpec<z.ZodType> | undefined;
  app.route({
    method: methods,
    url,
    config: { openapi: doc as RouteDoc },
    handler: async (req, reply) => {
      const params = spec.params ? parseInput(spec.params, req.params ?? {}, surface) : undefined;
      if (spec.deferred) return handler(req, reply, { params, query: undefined, body: undefined } as RouteInput<P, Q, B>);
      const query = spec.query ? spec.query.safeParse(surface.query(req)) : undefined;
      // Without `invalid`, a bad query fails before the body is read (a bad body would answer otherwise).
      if (query && !query.success && !spec.invalid) throw errorOf(query.error.issues[0], surface);
      const parsedBody = body && !body.documentOnly ? body.schema.safeParse((body.read ?? surface.body)(req)) : undefined;
      const failed = [query, parsedBody].flatMap((r) => (r && !r.success ? r.error.issues : []));
      if (failed.length > 0) throw spec.invalid ? spec.invalid(failed.map(inputIssue)) : errorOf(failed[0], surface);
      const input = { params, query: query?.data, body: parsedBody?.data } as RouteInput<P, Q, B>;
      return handler(req, reply, input);
    },
  });
}

/**
 * Validates `value` with `schema` as the seam does (the first issue's AppError, or the surface's
 * plain 400). For input the seam cannot read before the handler: multipart fields after the
 * stream is parsed, fields checked after a lookup or the credentials, so the error order holds.
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, surface: SurfaceInput): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw errorOf(result.error.issues[0], surface);
}

/** Validates `value` with `schema`, returning the parsed value or every issue (for `deferred` routes). */
export function inputIssues<S extends z.ZodType>(schema: S, value: unknown): { ok: true; data: z.output<S> } | { ok: false; issues: InputIssue[] } {
  const result = schema.safeParse(value);
  return result.success ? { ok: true, data: result.data } : { ok: false, issues: result.error.issues.map(inputIssue) };
}

function inputIssue(issue: z.core.$ZodIssue): InputIssue {
  const params = 'params' in issue ? (issue.params as Partial<WireError> | undefined) : undefined;
  return { field: String(issue.path[0] ?? ''), message: issue.message, ...(typeof params?.code === 'string' ? { code: params.code } : {}) };
}

/** `{"field": ["message", …]}` of every issue, in the order they were found. */
export function fieldErrors(issues: readonly InputIssue[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const i of issues) (out[i.field] ??= []).push(i.message);
  return out;
}

function errorOf(issue: z.core.$ZodIssue | undefined, surface: SurfaceInput): AppError {
  const params = issue && 'params' in issue ? (issue.params as Partial<WireError> | undefined) : undefined;
  if (params && typeof params.status === 'number' && typeof params.code === 'string') {
    return new AppError(params.status, params.code, issue?.message ?? '', params.headers ?? {});
  }
  return surface.invalid(issue?.message ?? 'Invalid request.');
}

interface WireError {
  status: number;
  code: string;
  headers: Record<string, string>;
}

/** Reports `err` (its status, code and message) as the schema's issue. */
export function failWith(ctx: z.RefinementCtx, err: AppError): typeof z.NEVER {
  ctx.addIssue({ code: 'custom', message: err.message, params: { status: err.status, code: err.code, headers: { ...err.headers } } });
  return z.NEVER;
}

/**
 * A schema whose value goes through an existing parser: the parser's AppError becomes the issue
 * (same status, code and message on the wire); its result is the parsed value.
 */
export function checked<I extends z.ZodType, T>(input: I, parse: (value: z.output<I>) => T): z.ZodPipe<I, z.ZodTransform<Awaited<T>, z.output<I>>> {
  return input.transform((value, ctx) => {
    try {
      return parse(value);
    } catch (err) {
      if (isAppError(err)) return failWith(ctx, err);
      throw err;
    }
  }) as z.ZodPipe<I, z.ZodTransform<Awaited<T>, z.output<I>>>;
}

/**
 * A UUID (path parameter or field), canonical (trimmed, lowercase) once parsed; anything else fails
 * with `invalid()`: a path id that is not a UUID names nothing, so routes answer their 404.
 */
export function uuidText(invalid: () => AppError, description: string) {
  return checked(z.string(), (v) => {
    const uuid = parseUuid(v);
    if (!uuid) throw invalid();
    return uuid;
  }).meta({ type: 'string', format: 'uuid', description });
}

/**
 * A field read by an existing parser from any JSON value, documented by `json` (a JSON Schema
 * fragment with its description): for bodies whose errors must keep their historical wording.
 */
export function parsedField<T>(json: Record<string, unknown>, parse: (value: unknown) => T) {
  return checked(z.unknown(), parse).meta(json);
}

/** A JSON object body; anything else (or none) is refused with `message`. */
export function objectBody<S extends z.ZodRawShape>(shape: S, message = 'Expected a JSON object.') {
  return z.object(shape, { error: () => message });
}
