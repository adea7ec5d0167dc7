/** JSON in and out without Fastify's defaults, which the official SDKs reject (charset suffix). */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { commonErrors } from '../../core/error-catalogue/common.js';

export function sendJson(reply: FastifyReply, status: number, body: unknown, contentType = 'application/json'): FastifyReply {
  return sendJsonBytes(reply, status, jsonBytes(body), contentType);
}

/** A body as `sendJson` sends it: for answers rendered once and sent many times. */
export function jsonBytes(body: unknown): Buffer {
  return Buffer.from(JSON.stringify(body));
}

/** Sends JSON already rendered by `jsonBytes`. */
export function sendJsonBytes(reply: FastifyReply, status: number, bytes: Buffer, contentType = 'application/json'): FastifyReply {
  // A Buffer, because Fastify appends "; charset=utf-8" to string bodies, which the JS SDK rejects.
  return reply.code(status).header('content-type', contentType).send(bytes);
}

/** The raw body captured by the buffer content parser (empty when none). */
export function rawBody(req: FastifyRequest): Buffer {
  return Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
}

export function mediaType(req: FastifyRequest): string {
  return (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** Parses a JSON body; `what` names the expectation in the 400 message. */
export function jsonBody(req: FastifyRequest): unknown {
  const raw = rawBody(req);
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    throw commonErrors.badJson();
  }
}

/** Form fields from a urlencoded body, or from a JSON object body (clients send either). */
export function formOrJsonBody(req: FastifyRequest): Record<string, unknown> {
  const raw = rawBody(req);
  if (raw.length === 0) return {};
  if (mediaType(req) === 'application/x-www-form-urlencoded') {
    return Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
  }
  const parsed = jsonBody(req);
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  // Not JSON-looking: try urlencoded anyway (some clients omit the content type).
  throw commonErrors.badBody();
}
