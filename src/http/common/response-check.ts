/**
 * Test-only response check (setting `checkResponses`, on in the test servers): every answer of a
 * described route is held against the response its description declares for that status: the
 * status must be declared, and a JSON body must parse with the declared schema and carry no field
 * the schema leaves out. A mismatch is logged and answered 500, so the test that caused it fails.
 * Off (the default) the hook is not even installed: production pays nothing.
 */
import { isDeepStrictEqual } from 'node:util';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { Logger } from 'pino';
import type { ResponseDoc } from './route.js';

/** A schema the surface accepts for this request whatever the status (the Upload API's `jsonerrors=1` 200). */
export type AlternativeAnswer = (req: FastifyRequest) => z.ZodType | undefined;

/**
 * Installs the check on a surface's root instance. `refusal` is the surface's one error answer:
 * a 4xx a route's description does not name (a shared guard's, such as a session's origin check
 * or a concurrent call) is held against it instead, so its body is still checked.
 */
export function checkResponses(app: FastifyInstance, log: Logger, alternative?: AlternativeAnswer, refusal?: ResponseDoc): void {
  app.addHook('onSend', (req, reply, payload, done) => {
    const problem = responseProblem(req, reply, payload, alternative, refusal);
    if (!problem) return done(null, payload);
    log.error({ method: req.method, url: req.url, status: reply.statusCode, problem }, 'response does not match its route description');
    reply.code(500).header('content-type', 'text/plain; charset=utf-8');
    done(null, `Response check: ${req.method} ${req.routeOptions.url ?? req.url} answered ${problem}`);
  });
}

/** What is wrong with the answer, or undefined when it matches (or the route is not described). */
function responseProblem(req: FastifyRequest, reply: FastifyReply, payload: unknown, alternative?: AlternativeAnswer, refusal?: ResponseDoc): string | undefined {
  const doc = req.routeOptions.config.openapi;
  const status = reply.statusCode;
  // Undescribed and hidden routes (the coverage test lists them; the documents themselves) and
  // server failures are not the contract.
  if (!doc || doc.hidden || status >= 500) return undefined;
  const body = bodyText(payload);
  const json = isJson(reply.getHeader('content-type'));
  const other = alternative?.(req);
  if (other && json && body !== undefined && matches(other, body) === undefined) return undefined;
  const declared: ResponseDoc | undefined = doc.responses[status] ?? (status >= 400 ? refusal : undefined);
  if (!declared) return `${status}, a status its description does not declare`;
  if (!json || body === undefined || body.length === 0 || req.method === 'HEAD') return undefined;
  if (!declared.schema) return `${status} with a JSON body where its description declares none`;
  const mismatch = matches(declared.schema, body);
  return mismatch === undefined ? undefined : `${status} with a body its schema refuses: ${mismatch}`;
}

/** Undefined when `body` is JSON that `schema` accepts as it is (no field dropped or changed). */
function matches(schema: z.ZodType, body: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return 'not JSON';
  }
  const result = schema.safeParse(value);
  if (!result.success) return result.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ');
  // zod drops the fields an object schema does not name: a field the schema forgot shows up here.
  if (!isDeepStrictEqual(result.data, value)) {
    const extra = extraPaths(value, result.data);
    // zod builds its copy by assignment, which cannot make an own `__proto__` key: a record's key of
    // that name (metadata admits it) is sent, and is never in the copy.
    if (extra.length === 0 || !extra.every((p) => p === '__proto__' || p.endsWith('.__proto__'))) return `fields the schema does not declare (${extra.join(', ')})`;
  }
  return undefined;
}

function extraPaths(sent: unknown, kept: unknown, at = ''): string[] {
  if (!sent || typeof sent !== 'object' || !kept || typeof kept !== 'object') return isDeepStrictEqual(sent, kept) ? [] : [at || '(body)'];
  const out: string[] = [];
  for (const [k, v] of Object.entries(sent)) {
    const path = at ? `${at}.${k}` : k;
    if (!(k in kept)) out.push(path);
    else out.push(...extraPaths(v, (kept as Record<string, unknown>)[k], path));
  }
  return out;
}

function bodyText(payload: unknown): string | undefined {
  if (Buffer.isBuffer(payload)) return payload.toString('utf8');
  return typeof payload === 'string' ? payload : undefined;
}

function isJson(contentType: unknown): boolean {
  const type = String(contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || type.endsWith('+json');
}
