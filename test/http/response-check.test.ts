/**
 * The test-only response check (STOWAGE_CHECK_RESPONSES, on in every test server): a described
 * route whose answer drifts from the schema declared for its status answers 500 and logs why, so
 * the suites covering that route fail. Here on a Fastify instance of its own, over real HTTP, with
 * routes whose descriptions are wrong on purpose.
 */
import { Writable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import pino from 'pino';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { sendJson } from '../../src/http/common/json.js';
import { checkResponses } from '../../src/http/common/response-check.js';
import { registerRoute, type SurfaceInput } from '../../src/http/common/route.js';

const surface: SurfaceInput = { query: () => ({}), body: () => undefined, invalid: (m) => new AppError(400, 'BadRequest', m) };
const item = z.object({ id: z.number().int(), name: z.string(), note: z.string().optional() });
const jsonError = z.object({ error: z.string() });
const refusal = z.object({ detail: z.string() });

let app: FastifyInstance;
let base = '';
const logged: string[] = [];

beforeAll(async () => {
  const log = pino({ level: 'error' }, new Writable({ write: (chunk, _enc, done) => done(null, void logged.push(String(chunk))) }));
  app = Fastify();
  checkResponses(app, log, (req) => (req.url.includes('jsonerrors') ? jsonError : undefined), { description: 'refused', schema: refusal });
  const route = (url: string, send: (reply: Parameters<typeof sendJson>[0]) => unknown) =>
    registerRoute(app, surface, { method: 'GET', url, summary: url, tags: [], security: [], responses: { 200: { description: 'ok', schema: item }, 204: { description: 'none' } } }, async (_req, reply) => send(reply));
  route('/good', (reply) => sendJson(reply, 200, { id: 1, name: 'a' }));
  route('/wrong-type', (reply) => sendJson(reply, 200, { id: '1', name: 'a' }));
  route('/extra-field', (reply) => sendJson(reply, 200, { id: 1, name: 'a', secret: 'x' }));
  route('/undeclared', (reply) => sendJson(reply, 201, { id: 1, name: 'a' }));
  route('/json-without-schema', (reply) => sendJson(reply, 204, { id: 1 }));
  route('/alternative', (reply) => sendJson(reply, 200, { error: 'nope' }));
  route('/refused', (reply) => sendJson(reply, 409, { detail: 'busy' }));
  route('/refused-wrongly', (reply) => sendJson(reply, 409, { reason: 'busy' }));
  base = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => app.close());

async function get(path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(base + path);
  return { status: res.status, body: await res.text() };
}

describe('response check', () => {
  it('passes an answer its schema declares, byte for byte', async () => {
    expect(await get('/good')).toEqual({ status: 200, body: '{"id":1,"name":"a"}' });
  });

  it('answers 500 naming the field when a value has the wrong type, and logs it', async () => {
    const res = await get('/wrong-type');
    expect(res.status).toBe(500);
    expect(res.body).toMatch(/^Response check: GET \/wrong-type answered 200 with a body its schema refuses: id: /);
    expect(logged.some((l) => l.includes('/wrong-type') && l.includes('does not match'))).toBe(true);
  });

  it('answers 500 for a field the schema does not declare', async () => {
    const res = await get('/extra-field');
    expect(res.status).toBe(500);
    expect(res.body).toContain('fields the schema does not declare (secret)');
  });

  it('answers 500 for a status the description does not declare, or a JSON body where it declares none', async () => {
    expect((await get('/undeclared')).body).toContain('201, a status its description does not declare');
    const res = await get('/json-without-schema');
    expect(res.status).toBe(500);
    expect(res.body).toContain('204 with a JSON body where its description declares none');
  });

  it("holds a 4xx the description does not name against the surface's refusal schema", async () => {
    expect(await get('/refused')).toEqual({ status: 409, body: '{"detail":"busy"}' });
    const res = await get('/refused-wrongly');
    expect(res.status).toBe(500);
    expect(res.body).toContain('409 with a body its schema refuses');
  });

  it("accepts the surface's alternative answer only where the surface allows it", async () => {
    expect(await get('/alternative?jsonerrors=1')).toEqual({ status: 200, body: '{"error":"nope"}' });
    expect((await get('/alternative')).status).toBe(500);
  });
});
