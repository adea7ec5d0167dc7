/**
 * REST reads answered in front of Fastify (src/http/rest/quick-reads.ts): a signed `GET /files/{uuid}/`
 * of a cached file is sent before routing. Each case checks which path answered (the node's
 * `stowage_rest_quick_answers` count) and that the quick answer is the routed one: the same status,
 * headers and bytes, the request's id and metrics, and every refusal (signature, Accept, date,
 * throttle, Simple auth) still the route's. The record cache itself is SQLite's (info-cache.test.ts);
 * on PostgreSQL nothing is cached, so every request must be routed.
 */
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { usingPostgres } from '../helpers/server.js';
import { request, type Res } from '../helpers/http.js';

const srv = useServer();
const V06 = 'application/vnd.uploadcare-v0.6+json';
const QUICK = 'stowage_rest_quick_answers';

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

/** Every header but the ones that differ per response. */
function headersOf(r: Res): Record<string, string> {
  const out: Record<string, string> = {};
  r.headers.forEach((v, k) => {
    if (k !== 'date' && k !== 'x-request-id') out[k] = v;
  });
  return out;
}

/** The answer when served in front of the routes, on SQLite; on PostgreSQL nothing is. */
const quickly = (n: number) => (usingPostgres() ? 0 : n);

/**
 * Reads the file until an answer comes before routing (SQLite): background jobs of its upload
 * write rows, and any write moves the store's change stamp, so the first reads may miss the cache.
 * Answers how many reads it took.
 */
async function settle(suite: typeof srv, uuid: string): Promise<number> {
  for (let reads = 1; reads <= 100; reads++) {
    if ((await quickDuring(suite.rest, async () => void (await suite.call('GET', `/files/${uuid}/`)))) === 1 || usingPostgres()) return reads;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no read of the file was answered before routing');
}

/**
 * A new file's first read (routed: nothing cached yet) and its second (before routing, on SQLite).
 * Retried with another file while background writes (the upload's own jobs) move the stamp between the two.
 */
async function routedThenQuick(accept: string | undefined): Promise<[Res, Res]> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const uuid = await srv.uploadFile('a.txt', 'a');
    await new Promise((r) => setTimeout(r, 200));
    let routed: Res | undefined;
    let quick: Res | undefined;
    expect(await quickDuring(srv.rest, async () => void (routed = await srv.call('GET', `/files/${uuid}/`, { accept })))).toBe(0);
    const answered = await quickDuring(srv.rest, async () => void (quick = await srv.call('GET', `/files/${uuid}/`, { accept })));
    if (answered === quickly(1)) return [routed!, quick!];
  }
  throw new Error('no second read was answered before routing');
}

describe('REST reads answered before routing', () => {
  it('answer a cached file info with the routed answer: status, headers, bytes, in both API versions', async () => {
    for (const accept of [undefined, V06]) {
      const [routed, quick] = await routedThenQuick(accept);
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
    const before = await metric(srv.rest, series);
    const quick = await quickDuring(srv.rest, async () => {
      const r = await srv.call('GET', `/files/${uuid}/`, { headers: { 'x-request-id': 'quick-read-1' } });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-request-id')).toBe('quick-read-1');
      expect((await srv.call('GET', `/files/${uuid}/`)).headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-/);
    });
    expect(quick).toBe(quickly(2));
    expect((await metric(srv.rest, series)) - before).toBe(2);
  });

  it('leave every refusal and every other request to the route', async () => {
    const uuid = await srv.uploadFile('c.txt', 'c');
    const other = await srv.newProject();
    await settle(srv, uuid);
    const quick = await quickDuring(srv.rest, async () => {
      const badSignature = await srv.call('GET', `/files/${uuid}/`, { authorization: `Uploadcare ${srv.keys.public_key}:${'0'.repeat(40)}` });
      expect([badSignature.status, badSignature.json]).toEqual([401, { detail: 'Invalid signature. Please check your Secret key.' }]);
      const oldDate = await srv.call('GET', `/files/${uuid}/`, { date: new Date(Date.now() - 3600_000) });
      expect([oldDate.status, oldDate.json]).toEqual([401, { detail: 'Incorrect authentication credentials.' }]);
      const accept = await srv.call('GET', `/files/${uuid}/`, { accept: 'application/json' });
      expect(accept.status).toBe(406);
      expect((await srv.call('GET', `/files/${uuid}/`, { authorization: null })).status).toBe(401);
      expect((await other.call('GET', `/files/${uuid}/`)).status).toBe(404);
      // Routed, and answered as before: a query string, another path, a body, HEAD, an unknown file.
      expect((await srv.call('GET', `/files/${uuid}/?include=appdata`)).json.appdata).toEqual({});
      expect((await srv.call('GET', `/files/${uuid}/tags/`)).status).toBe(200);
      expect((await srv.call('GET', `/files/${uuid.toUpperCase()}/`)).json.uuid).toBe(uuid);
      expect((await srv.call('HEAD', `/files/${uuid}/`)).status).toBe(200);
      expect((await srv.call('GET', '/files/00000000-0000-4000-8000-000000000000/')).status).toBe(404);
    });
    // The upper-case uuid names the cached file: answered before routing like the lower-case one.
    expect(quick).toBe(quickly(1));
    const preflight = await request(`${srv.rest}/files/${uuid}/`, { method: 'OPTIONS', headers: { origin: 'https://example.com', 'access-control-request-method': 'GET' } });
    expect(preflight.status).toBe(204);
  });

  it('answer Simple auth from loopback, and refuse a wrong secret as the route does', async () => {
    const uuid = await srv.uploadFile('d.txt', 'd');
    await settle(srv, uuid);
    const quick = await quickDuring(srv.rest, async () => {
      const ok = await srv.call('GET', `/files/${uuid}/`, { authorization: `Uploadcare.Simple ${srv.keys.public_key}:${srv.keys.secret_key}` });
      expect([ok.status, ok.json?.uuid]).toEqual([200, uuid]);
      const wrong = await srv.call('GET', `/files/${uuid}/`, { authorization: `Uploadcare.Simple ${srv.keys.public_key}:nope` });
      expect([wrong.status, wrong.json]).toEqual([401, { detail: 'Secret key not found.' }]);
    });
    expect(quick).toBe(quickly(1));
  });
});

describe('REST reads answered before routing, throttled', () => {
  // A budget of 30 requests that does not refill within the test.
  const slow = useServer({ env: { STOWAGE_RATE_REST_PER_SEC: '0.001', STOWAGE_RATE_REST_BURST: '30' } });

  it('spend the project budget and leave the 429 (with Retry-After) to the route', async () => {
    const uuid = await slow.uploadFile('e.txt', 'e');
    // Every answer spends one request of the budget, whichever path gave it.
    let answered = await settle(slow, uuid);
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
    expect(quick).toBeGreaterThanOrEqual(quickly(1));
  });
});
