/**
 * REST reads answered in front of Fastify (src/http/rest/quick-reads.ts): a signed `GET /files/{uuid}/`
 * is sent before routing, from the record cache (SQLite) or read there from the store (a cache miss;
 * PostgreSQL, which has no cache). Each case checks which path answered (the node's
 * `stowage_rest_quick_answers_total` count) and that the quick answer is the routed one: the same status,
 * headers and bytes, the request's id and metrics, and every refusal (signature, Accept, date,
 * throttle, Simple auth, an unknown file) still the route's. The record cache itself is SQLite's
 * (info-cache.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { request, type Res } from '../helpers/http.js';

const srv = useServer();
const V06 = 'application/vnd.uploadcare-v0.6+json';
const QUICK = 'stowage_rest_quick_answers_total';

async function metric(base: string, series: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

/** Runs `fn` and answers how many requests were answered before routing meanwhile. */
async function quickDuring(base: string, fn: () => Promise<void>): Promise<number> {
  const before = await metric(base, QUICK);
  await fn();
  return (await metric(base, QUICK)) - before;
}

/**
 * Runs `fn` (whose checks hold on either path) until `expected` of its requests were answered
 * before routing, at most 10 times; answers the last count. A project's keys stay cached for 2 s
 * after the full path read them, and a read without cached keys is routed (which reads them again).
 */
async function untilQuick(base: string, expected: number, fn: () => Promise<void>): Promise<number> {
  let quick = 0;
  for (let attempt = 0; attempt < 10 && quick !== expected; attempt++) quick = await quickDuring(base, fn);
  return quick;
}

/** Every header but the ones that differ per response. */
function headersOf(r: Res): Record<string, string> {
  const out: Record<string, string> = {};
  r.headers.forEach((v, k) => {
    if (k !== 'date' && k !== 'x-request-id') out[k] = v;
  });
  return out;
}

/**
 * Reads the file until an answer comes before routing. A read is routed while this node has not
 * cached the project's keys (a new project elsewhere clears them; the routed read fills them).
 * Answers how many reads it took.
 */
async function settle(suite: typeof srv, uuid: string): Promise<number> {
  for (let reads = 1; reads <= 20; reads++) {
    if ((await quickDuring(suite.rest, async () => void (await suite.call('GET', `/files/${uuid}/`)))) === 1) return reads;
  }
  throw new Error('no read of the file was answered before routing');
}

/**
 * A new file's answer from the route (a query string, here one the route ignores, sends it there) and its first plain
 * read, answered before routing although nothing is cached yet: read from the store in front of
 * the route. A new file each try: the plain read is routed when the project's keys, cached for 2 s
 * from the upload's lookup, expired meanwhile (a loaded machine).
 */
async function routedAndQuick(accept: string | undefined): Promise<[Res, Res]> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const uuid = await srv.uploadFile('a.txt', 'a');
    let routed: Res | undefined;
    let quick: Res | undefined;
    expect(await quickDuring(srv.rest, async () => void (routed = await srv.call('GET', `/files/${uuid}/?routed=1`, { accept })))).toBe(0);
    if ((await quickDuring(srv.rest, async () => void (quick = await srv.call('GET', `/files/${uuid}/`, { accept })))) === 1) return [routed!, quick!];
  }
  throw new Error('no first read of a new file was answered before routing');
}

describe('REST reads answered before routing', () => {
  it('answer a file info with the routed answer, cached or not: status, headers, bytes, in both API versions', async () => {
    for (const accept of [undefined, V06]) {
      const [routed, quick] = await routedAndQuick(accept);
      expect(quick.status).toBe(200);
      expect(headersOf(quick)).toEqual(headersOf(routed));
      expect(quick.headers.get('access-control-allow-origin')).toBe('*');
      expect(quick.headers.get('content-type')).toBe('application/json');
      expect(quick.body.equals(routed.body)).toBe(true);
    }
  });

  it('keep the request id and count the request under its route', async () => {
    const uuid = await srv.uploadFile('b.txt', 'b');
    const series = 'stowage_http_request_duration_seconds_count{surface="rest",route="/files/:uuid/",status="200"}';
    await settle(srv, uuid);
    let counted = 0;
    const quick = await untilQuick(srv.rest, 2, async () => {
      const before = await metric(srv.rest, series);
      const r = await srv.call('GET', `/files/${uuid}/`, { headers: { 'x-request-id': 'quick-read-1' } });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-request-id')).toBe('quick-read-1');
      expect((await srv.call('GET', `/files/${uuid}/`)).headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-/);
      counted = (await metric(srv.rest, series)) - before;
    });
    expect(quick).toBe(2);
    expect(counted).toBe(2);
  });

  it('leave every refusal and every other request to the route', async () => {
    const uuid = await srv.uploadFile('c.txt', 'c');
    const other = await srv.newProject();
    await settle(srv, uuid);
    const quick = await untilQuick(srv.rest, 1, async () => {
      const badSignature = await srv.call('GET', `/files/${uuid}/`, { authorization: `Uploadcare ${srv.keys.public_key}:${'0'.repeat(40)}` });
      expect([badSignature.status, badSignature.json]).toEqual([401, { detail: 'Invalid signature. Please check your Secret key.' }]);
      const oldDate = await srv.call('GET', `/files/${uuid}/`, { date: new Date(Date.now() - 3600_000) });
      expect([oldDate.status, oldDate.json]).toEqual([401, { detail: 'Incorrect authentication credentials.' }]);
      const accept = await srv.call('GET', `/files/${uuid}/`, { accept: 'application/json' });
      expect(accept.status).toBe(406);
      expect((await srv.call('GET', `/files/${uuid}/`, { authorization: null })).status).toBe(401);
      expect((await other.call('GET', `/files/${uuid}/`)).status).toBe(404);
      // Routed through Fastify and answered there: a query string, another path, a body, HEAD, an unknown file.
      expect((await srv.call('GET', `/files/${uuid}/?include=appdata`)).json.appdata).toEqual({});
      expect((await srv.call('GET', `/files/${uuid}/tags/`)).status).toBe(200);
      expect((await srv.call('GET', `/files/${uuid.toUpperCase()}/`)).json.uuid).toBe(uuid);
      expect((await srv.call('HEAD', `/files/${uuid}/`)).status).toBe(200);
      expect((await srv.call('GET', '/files/00000000-0000-4000-8000-000000000000/')).status).toBe(404);
    });
    // The upper-case uuid names the same file: answered before routing like the lower-case one.
    expect(quick).toBe(1);
    const preflight = await request(`${srv.rest}/files/${uuid}/`, { method: 'OPTIONS', headers: { origin: 'https://example.com', 'access-control-request-method': 'GET' } });
    expect(preflight.status).toBe(204);
  });

  it('answer Simple auth from loopback, and refuse a wrong secret as the route does', async () => {
    const uuid = await srv.uploadFile('d.txt', 'd');
    await settle(srv, uuid);
    const quick = await untilQuick(srv.rest, 1, async () => {
      const ok = await srv.call('GET', `/files/${uuid}/`, { authorization: `Uploadcare.Simple ${srv.keys.public_key}:${srv.keys.secret_key}` });
      expect([ok.status, ok.json?.uuid]).toEqual([200, uuid]);
      const wrong = await srv.call('GET', `/files/${uuid}/`, { authorization: `Uploadcare.Simple ${srv.keys.public_key}:nope` });
      expect([wrong.status, wrong.json]).toEqual([401, { detail: 'Secret key not found.' }]);
    });
    expect(quick).toBe(1);
  });
});

describe('REST reads answered before routing, throttled', () => {
  // A budget of 30 requests that does not refill within the test.
  const slow = useServer({ env: { STOWAGE_RATE_REST_PER_SEC: '0.001', STOWAGE_RATE_REST_BURST: '30' } });

  it('spend the project budget and leave the 429 (with Retry-After) to the route', async () => {
    const uuid = await slow.uploadFile('e.txt', 'e');
    // Every answer spends one request of the budget, whichever path gave it.
    const settled = await settle(slow, uuid);
    let answered = settled;
    let refused: Res | undefined;
    const quick = await quickDuring(slow.rest, async () => {
      while (answered <= 30) {
        const r = await slow.call('GET', `/files/${uuid}/`);
        if (r.status !== 200) {
          refused = r;
          break;
        }
        answered++;
      }
    });
    expect(answered).toBe(30);
    expect(refused?.status).toBe(429);
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused?.json.detail).toMatch(/^Request was throttled\. Expected available in \d+ seconds\.$/);
    expect(quick).toBe(30 - settled);
  });

  it('spend once for a read admitted in front of Fastify and then answered by the route', async () => {
    const project = await slow.newProject();
    const missing = '00000000-0000-4000-8000-000000000000';
    const read = () => project.call('GET', `/files/${missing}/`);
    // The first read is routed (it reads the project's keys); the rest are admitted in front, find
    // no file and go on to the route, which answers the 404 without spending again.
    let inFront = 0;
    for (let i = 0; i < 10; i++) {
      const before = await metric(slow.rest, 'stowage_rest_quick_answers_total');
      expect((await read()).status).toBe(404);
      inFront += (await metric(slow.rest, 'stowage_rest_quick_answers_total')) - before;
    }
    expect(inFront).toBe(0);
    let answered = 10;
    while (answered <= 30 && (await read()).status === 404) answered++;
    expect(answered).toBe(30);
  });
});
