/**
 * REST body fuzzer: correctly signed requests (so they reach the handlers) with broken
 * JSON, wrong types, huge numbers, NUL and control characters, and odd content types, plus bodies
 * cut short on the wire. Every answer is below 500 and the server keeps serving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, usingPostgres, type ProjectKeys, type TestServer } from '../helpers/server.js';
import { restClient, sign, uploadBase } from '../helpers/rest.js';
import { HOSTILE_STRINGS, pct, brokenJson, formText, mutateObject } from './bodies.js';
import { fuzzAgent, pool, raw, send } from './http-client.js';
import { SOAK_ONLY, envNumber, pendingGate, report, sized } from './mode.js';
import { Random, seedFromEnv } from './random.js';
import { healthy } from './server-health.js';

/**
 * Cases whose fix is not on main yet (skipped; STOWAGE_RELIABILITY_UNGATE=all runs them):
 * - webhook-nul-postgres: a NUL in a webhook's target_url or signing_secret is a 500 on PostgreSQL.
 *   While pending the fuzzer leaves NUL out of webhook bodies on PostgreSQL.
 * (slow-body-timeout, a stalled body held for 300 s, landed: its case below runs.)
 */
const PENDING = new Set<string>([]);
const pending = pendingGate(PENDING);

const BODY_COUNT = envNumber('STOWAGE_RELIABILITY_BODIES', sized(2000, 100_000));
const SEED = seedFromEnv();
const CONCURRENCY = 6;
/** The server's body idle timeout in this file (a documented setting; 60 s by default). */
const BODY_IDLE_MS = 3000;

let server: TestServer;
let keys: ProjectKeys;
let uuids: string[];
let hookId: number;

beforeAll(async () => {
  if (SOAK_ONLY) return;
  server = await startServer({
    env: { STOWAGE_RATE_REST_PER_SEC: '0', STOWAGE_RATE_UPLOAD_PER_SEC: '0', STOWAGE_RATE_UPLOAD_IP_PER_SEC: '0', STOWAGE_LOG_LEVEL: 'error', STOWAGE_BODY_IDLE_TIMEOUT_MS: String(BODY_IDLE_MS) },
  });
  keys = await server.createProject();
  uuids = [];
  for (let i = 0; i < 5; i++) {
    const r = await uploadBase(server.upload, keys.public_key, [{ name: `f${i}.txt`, data: `file ${i}` }], { UPLOADCARE_STORE: '1' });
    uuids.push(r.json.file as string);
  }
  const hook = await restClient(server.rest, keys)('POST', '/webhooks/', { body: JSON.stringify({ target_url: 'https://hooks.example.com/a', event: 'file.uploaded' }) });
  expect(hook.status).toBe(201);
  hookId = hook.json.id as number;
}, 120_000);

afterAll(async () => server?.stop());

interface Target {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: (rnd: Random) => string;
  /** A valid body to start from; undefined for bodiless requests. */
  template?: (rnd: Random) => unknown;
  webhook?: boolean;
}

const uuidOf = (rnd: Random) => (rnd.chance(0.9) ? rnd.pick(uuids) : rnd.pick(['00000000-0000-0000-0000-000000000000', 'not-a-uuid', '%00', 'x'.repeat(300)]));
const queryValue = (rnd: Random) => pct(rnd.chance(0.5) ? rnd.pick(HOSTILE_STRINGS).slice(0, 500) : String(rnd.pick([0, -1, 1e21, 2 ** 64, '1.5', 'NaN', '9'.repeat(40)])));

const TARGETS: Target[] = [
  { method: 'PUT', path: () => '/files/storage/', template: (rnd) => [rnd.pick(uuids), rnd.pick(uuids)] },
  { method: 'DELETE', path: () => '/files/storage/', template: (rnd) => [rnd.pick(uuids)] },
  { method: 'PUT', path: (rnd) => `/files/${uuidOf(rnd)}/storage/` },
  { method: 'GET', path: (rnd) => `/files/${uuidOf(rnd)}/?include=${queryValue(rnd)}` },
  { method: 'PUT', path: (rnd) => `/files/${uuidOf(rnd)}/metadata/${rnd.pick(['k', 'key_1', pct(rnd.pick(HOSTILE_STRINGS).slice(0, 100)) || 'k'])}/`, template: () => 'value' },
  { method: 'DELETE', path: (rnd) => `/files/${uuidOf(rnd)}/metadata/k/` },
  { method: 'POST', path: () => '/files/local_copy/', template: (rnd) => ({ source: rnd.pick(uuids), store: true, metadata: { a: 'b' } }) },
  { method: 'POST', path: () => '/files/remote_copy/', template: (rnd) => ({ source: rnd.pick(uuids), target: 'nowhere', make_public: true, pattern: '${default}' }) },
  { method: 'POST', path: () => '/webhooks/', webhook: true, template: (rnd) => ({ target_url: `https://hooks.example.com/${rnd.int(0, 1e9)}`, event: 'file.uploaded', is_active: true, signing_secret: 's', version: '0.7' }) },
  { method: 'PUT', path: () => `/webhooks/${hookId}/`, webhook: true, template: () => ({ is_active: false, signing_secret: 'x', target_url: 'https://hooks.example.com/a' }) },
  { method: 'POST', path: () => '/webhooks/unsubscribe/', webhook: true, template: (rnd) => ({ target_url: `https://hooks.example.com/${rnd.int(0, 1e9)}`, event: 'file.uploaded' }) },
  { method: 'GET', path: (rnd) => `/files/?limit=${queryValue(rnd)}&ordering=${queryValue(rnd)}&from=${queryValue(rnd)}&stored=${queryValue(rnd)}&removed=${queryValue(rnd)}` },
  { method: 'GET', path: (rnd) => `/groups/?limit=${queryValue(rnd)}&from=${queryValue(rnd)}&ordering=${queryValue(rnd)}` },
  { method: 'GET', path: (rnd) => `/webhooks/${rnd.pick([String(hookId), '0', '-1', '99999999999999999999', 'x'])}/deliveries/?limit=${queryValue(rnd)}` },
];

const CONTENT_TYPES = ['application/json', 'application/json', 'application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data', 'application/json; charset=utf-16', 'application/xml', ''];

/** One fuzzed request: method, path, content type and body bytes. */
function fuzzedRequest(rnd: Random): { method: Target['method']; path: string; contentType: string; body: Buffer } {
  const t = rnd.pick(TARGETS);
  const path = t.path(rnd);
  if (!t.template) return { method: t.method, path, contentType: 'application/json', body: Buffer.alloc(0) };
  const template = t.template(rnd);
  let value = typeof template === 'object' && template !== null && !Array.isArray(template) ? mutateObject(rnd, template as Record<string, unknown>) : rnd.chance(0.5) ? rnd.pick([template, ...HOSTILE_STRINGS]) : template;
  // Until the PostgreSQL NUL fix lands, keep NUL out of webhook fields on PostgreSQL (its own case below).
  const avoidNul = t.webhook === true && usingPostgres() && pending('webhook-nul-postgres');
  let contentType = rnd.pick(CONTENT_TYPES);
  let text: string;
  if (rnd.chance(0.25)) text = brokenJson(rnd, JSON.stringify(template));
  else if (contentType === 'application/x-www-form-urlencoded' && typeof value === 'object' && value !== null) text = formText(rnd, value as Record<string, unknown>);
  else text = JSON.stringify(value) ?? '';
  if (avoidNul) {
    text = text.replace(/\\u0000|\u0000|%00/g, '');
    value = null;
  }
  if (rnd.chance(0.05)) contentType = `${contentType}; boundary=${'b'.repeat(rnd.int(0, 300))}`;
  return { method: t.method, path, contentType, body: Buffer.from(text, 'utf8') };
}

function signedHeaders(method: string, path: string, contentType: string, body: Buffer): Record<string, string> {
  const date = new Date().toUTCString();
  return {
    'content-type': contentType,
    accept: 'application/vnd.uploadcare-v0.7+json',
    date,
    authorization: `Uploadcare ${keys.public_key}:${sign(keys.secret_key, method, body, contentType, date, path)}`,
  };
}

describe.skipIf(SOAK_ONLY)('REST body fuzzer', () => {
  it(`${BODY_COUNT} hostile signed bodies: every answer below 500, server alive (seed ${SEED})`, async () => {
    const rnd = new Random(SEED);
    const agent = fuzzAgent(CONCURRENCY, 30_000);
    const statuses = new Map<number, number>();
    const serverErrors: Array<{ method: string; path: string; contentType: string; body: string; status: number; answer: string }> = [];
    const failures: string[] = [];
    const t0 = Date.now();
    await pool(BODY_COUNT, CONCURRENCY, async () => {
      const req = fuzzedRequest(rnd);
      try {
        const a = await send(agent, server.rest + req.path, { method: req.method, headers: signedHeaders(req.method, req.path, req.contentType, req.body), ...(req.method === 'GET' ? {} : { body: req.body }) });
        statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
        if (a.status >= 500) serverErrors.push({ ...req, body: JSON.stringify(req.body.toString('utf8', 0, 200)), status: a.status, answer: a.body.toString('utf8', 0, 200) });
      } catch (err) {
        failures.push(`${req.method} ${req.path.slice(0, 100)}: ${String(err)}`);
      }
    });
    await agent.close();
    report('rest-fuzz', { seed: SEED, bodies: BODY_COUNT, seconds: Math.round((Date.now() - t0) / 1000), statuses: Object.fromEntries(statuses), errors5xx: serverErrors.length, failures: failures.length });
    expect(serverErrors.slice(0, 20), 'responses >= 500').toEqual([]);
    expect(failures.slice(0, 20)).toEqual([]);
    expect(statuses.get(200) ?? 0, 'some requests were valid').toBeGreaterThan(0);
    expect(await healthy(server)).toBe(true);
  }, 0);

  it('bodies cut short on the wire get no 5xx and leave the server serving', async () => {
    const path = `/files/${uuids[0]}/metadata/k/`;
    const body = Buffer.from(JSON.stringify('a value'));
    const head = Object.entries(signedHeaders('PUT', path, 'application/json', body)).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    for (const cut of [0, 1, body.length - 1]) {
      const r = await raw(server.rest, Buffer.concat([Buffer.from(`PUT ${path} HTTP/1.1\r\nhost: x\r\n${head}content-length: ${body.length}\r\n\r\n`), body.subarray(0, cut)]), { endWrite: true, waitMs: 5000 });
      expect(r.text, `cut at ${cut}`).not.toMatch(/^HTTP\/1\.1 5\d\d/);
    }
    // Declared lengths that lie or overflow.
    for (const length of ['-1', '99999999999999999999', '1, 2', 'abc']) {
      const r = await raw(server.rest, Buffer.from(`PUT ${path} HTTP/1.1\r\nhost: x\r\n${head}content-length: ${length}\r\n\r\n"x"`), { endWrite: true, waitMs: 5000 });
      expect(r.text, `content-length ${length}`).not.toMatch(/^HTTP\/1\.1 5\d\d/);
    }
    const chunked = await raw(server.rest, Buffer.from(`PUT ${path} HTTP/1.1\r\nhost: x\r\n${head}transfer-encoding: chunked\r\n\r\nffffffffffffffff\r\nab`), { endWrite: true, waitMs: 5000 });
    expect(chunked.text).not.toMatch(/^HTTP\/1\.1 5\d\d/);
    expect(await healthy(server)).toBe(true);
  });

  it.skipIf(!usingPostgres() || pending('webhook-nul-postgres'))('a NUL or control character in webhook fields is a 400 field error (PostgreSQL)', async () => {
    const call = restClient(server.rest, keys);
    for (const fields of [{ target_url: 'https://hooks.example.com/a\u0000b', event: 'file.uploaded' }, { target_url: 'https://hooks.example.com/nul', event: 'file.uploaded', signing_secret: 'a\u0000b' }]) {
      const r = await call('POST', '/webhooks/', { body: JSON.stringify(fields) });
      expect(r.status, r.text).toBe(400);
    }
    const r = await call('PUT', `/webhooks/${hookId}/`, { body: JSON.stringify({ signing_secret: '\u0000' }) });
    expect(r.status, r.text).toBe(400);
  });

  it.skipIf(pending('slow-body-timeout'))('a body that stops arriving is cut off by the server, not held for minutes', async () => {
    const path = `/files/${uuids[0]}/metadata/k/`;
    const body = Buffer.from(JSON.stringify('a value'));
    const head = Object.entries(signedHeaders('PUT', path, 'application/json', body)).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    // Headers and half the body, then silence with the connection open.
    const r = await raw(server.rest, Buffer.concat([Buffer.from(`PUT ${path} HTTP/1.1\r\nhost: x\r\n${head}content-length: ${body.length}\r\n\r\n`), body.subarray(0, 3)]), { endWrite: false, waitMs: BODY_IDLE_MS + 20_000 });
    expect(r.closedByServer, 'the server closes a stalled body').toBe(true);
    expect(r.ms).toBeLessThan(BODY_IDLE_MS + 15_000);
    expect(r.text).not.toMatch(/^HTTP\/1\.1 5\d\d/);
  }, 60_000);
});
