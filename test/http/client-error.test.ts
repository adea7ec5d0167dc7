/**
 * Requests the HTTP parser refuses (here a request line over Node's 16 KB limit) on kept-alive
 * connections: the answer says `Connection: close` and arrives whole, and the client's next
 * request goes out on a new connection instead of meeting a reset (src/http/common/client-error.ts).
 * Found by the Upload API fuzzer with kept-alive form requests: 1-7 resets per 1,500 forms.
 */
import { Agent, request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';

const srv = useServer();
const agent = new Agent({ connections: 1, pipelining: 1 });
afterAll(() => agent.close());

const longQuery = `?pad=${'x'.repeat(20 * 1024)}`;

async function roundTrip(url: string) {
  const res = await request(url, { dispatcher: agent });
  return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
}

describe('a request the HTTP parser refuses, on a kept-alive connection', () => {
  for (const surface of ['upload', 'rest'] as const) {
    it(`${surface}: 431 with Connection: close, then the next request on the same agent is answered (20 rounds)`, async () => {
      const base = surface === 'upload' ? srv.upload : srv.rest;
      const ok = surface === 'upload' ? `${base}/info/?pub_key=${srv.keys.public_key}&file_id=00000000-0000-4000-8000-000000000000` : `${base}/healthz`;
      for (let round = 0; round < 20; round++) {
        // The agent's one connection is warm and kept alive before the refused request goes out on it.
        expect((await roundTrip(ok)).status).toBeLessThan(500);
        const refused = await roundTrip(`${base}/info/${longQuery}`);
        expect(refused.status).toBe(431);
        expect(refused.headers['connection']).toBe('close');
        expect(refused.body).toMatch(/too large/);
        expect((await roundTrip(ok)).status).toBeLessThan(500);
      }
    });
  }
});
