/**
 * Delivery behaviour: retries until a receiver recovers (every attempt recorded), a bounded retry
 * window, timeouts, what is kept of an answer (a huge or endless body, a redirect), and targets
 * refused by the SSRF guard never being contacted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { restClient, uploadBase } from '../helpers/rest.js';
import { eventually, sleep, startReceiver, validSignature, type Receiver } from './receiver.js';

const form = (fields: Record<string, string>) => ({ body: new URLSearchParams(fields).toString(), contentType: 'application/x-www-form-urlencoded' });

interface DeliveryRec {
  attempt: number;
  status: number | null;
  success: boolean;
  error: string | null;
  response_excerpt: string | null;
  event_id: number;
  duration_ms: number;
}

async function deliveries(call: ReturnType<typeof restClient>, id: number): Promise<DeliveryRec[]> {
  const r = await call('GET', `/webhooks/${id}/deliveries/?limit=1000`);
  expect(r.status).toBe(200);
  return (r.json.results as DeliveryRec[]).slice().reverse(); // oldest first
}

describe('retries (server allowed to reach loopback)', () => {
  const srv = useServer({
    env: {
      STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8',
      STOWAGE_WEBHOOK_RETRY_BASE_MS: '100',
      STOWAGE_WEBHOOK_RETRY_MAX_MS: '400',
      STOWAGE_WEBHOOK_RETRY_FOR_MS: '4000',
      STOWAGE_WEBHOOK_TIMEOUT_MS: '1500',
    },
  });
  const receivers: Receiver[] = [];

  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
  });

  async function subscribe(receiver: Receiver, secret?: string): Promise<number> {
    receivers.push(receiver);
    const r = await srv.call('POST', '/webhooks/', form({ target_url: receiver.url, event: 'file.uploaded', ...(secret ? { signing_secret: secret } : {}) }));
    expect(r.status).toBe(201);
    return r.json.id;
  }

  it('a receiver failing three times then recovering gets the event; four attempts are recorded', async () => {
    const receiver = await startReceiver((n) => (n < 3 ? { status: 500 + n, body: `boom-${n}-` + 'x'.repeat(3000) } : { status: 204 }));
    const id = await subscribe(receiver, 'retry-secret');
    const up = await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'a.txt', data: 'a' }], { UPLOADCARE_STORE: '0' });
    const hits = await receiver.waitFor(4);
    // Same bytes every time (built once at event time), each correctly signed.
    expect(new Set(hits.map((h) => h.body)).size).toBe(1);
    for (const h of hits) expect(validSignature('retry-secret', h.body, h.headers['x-uc-signature'])).toBe(true);
    expect(hits[0]!.json.data.uuid).toBe(up.json.file);
    const recs = await eventually(async () => {
      const all = await deliveries(srv.call, id);
      return all.length >= 4 && all;
    }, 10_000, 'four delivery records');
    expect(recs.map((r) => r.attempt)).toEqual([1, 2, 3, 4]);
    expect(recs.map((r) => r.status)).toEqual([500, 501, 502, 204]);
    expect(recs.map((r) => r.success)).toEqual([false, false, false, true]);
    expect(new Set(recs.map((r) => r.event_id)).size).toBe(1);
    for (const [i, r] of recs.slice(0, 3).entries()) {
      expect(r.response_excerpt!.startsWith(`boom-${i}-xxx`)).toBe(true);
      expect(Buffer.byteLength(r.response_excerpt!)).toBe(1024);
    }
    await sleep(1000);
    expect(receiver.received.length).toBe(4);
  });

  it('gives up after the retry window; a hanging receiver is recorded as a timeout', async () => {
    const receiver = await startReceiver((n) => (n === 0 ? 'hang' : { status: 503, body: 'down' }));
    const id = await subscribe(receiver);
    await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'b.txt', data: 'b' }], { UPLOADCARE_STORE: '0' });
    // The window is 4 s after the event; wait until the records stop growing past it.
    await sleep(5500);
    const settled = await deliveries(srv.call, id);
    await sleep(1500);
    const later = await deliveries(srv.call, id);
    expect(later.length).toBe(settled.length);
    expect(settled.length).toBeGreaterThanOrEqual(3);
    expect(settled.every((r) => !r.success)).toBe(true);
    expect(settled[0]).toMatchObject({ attempt: 1, status: null, success: false });
    expect(settled[0]!.error).toContain('DownloadFileTimeLimitExceededError');
    expect(settled[1]).toMatchObject({ attempt: 2, status: 503, response_excerpt: 'down' });
    // Every record is a request, except those the target's circuit breaker held back (five failures in a row).
    const held = settled.filter((r) => r.error?.startsWith('circuit '));
    expect(receiver.received.length).toBe(settled.length - held.length);
    for (const r of held) expect(r).toMatchObject({ status: null, success: false });
  });
});

describe('what is kept of an answer (server allowed to reach loopback)', () => {
  const srv = useServer({
    env: {
      STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8',
      STOWAGE_WEBHOOK_TIMEOUT_MS: '5000',
      STOWAGE_WEBHOOK_RETRY_BASE_MS: '100',
      STOWAGE_WEBHOOK_RETRY_MAX_MS: '400',
      STOWAGE_WEBHOOK_RETRY_FOR_MS: '2000',
    },
  });
  const receivers: Receiver[] = [];

  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
  });

  async function subscribe(receiver: Receiver): Promise<number> {
    receivers.push(receiver);
    const r = await srv.call('POST', '/webhooks/', form({ target_url: receiver.url, event: 'file.uploaded' }));
    expect(r.status).toBe(201);
    return r.json.id;
  }
  const firstRecord = (id: number) => eventually(async () => (await deliveries(srv.call, id))[0], 10_000, `a delivery record for hook ${id}`);

  it('a huge or never-ending body: the excerpt is its first 1024 bytes of whole characters, and the delivery ends long before the timeout', async () => {
    const huge = await startReceiver(() => ({ status: 200, body: 'é'.repeat(4 * 1024 * 1024) })); // 8 MiB, 2 bytes a character
    const endless = await startReceiver(() => ({ status: 200, body: '€'.repeat(2000), open: true })); // 3 bytes a character
    const hugeId = await subscribe(huge);
    const endlessId = await subscribe(endless);
    await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'h.txt', data: 'h' }], { UPLOADCARE_STORE: '0' });
    for (const [id, excerpt] of [[hugeId, 'é'.repeat(512)], [endlessId, '€'.repeat(341)]] as const) {
      const rec = await firstRecord(id);
      expect(rec).toMatchObject({ attempt: 1, status: 200, success: true, error: null, response_excerpt: excerpt });
      expect(rec.duration_ms).toBeLessThan(2500);
    }
  });

  it('a redirect is the answer: recorded with its status, its Location never contacted', async () => {
    const elsewhere = await startReceiver();
    receivers.push(elsewhere);
    const id = await subscribe(await startReceiver(() => ({ status: 302, headers: { location: elsewhere.url }, body: 'moved' })));
    await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'r.txt', data: 'r' }], { UPLOADCARE_STORE: '0' });
    expect(await firstRecord(id)).toMatchObject({ attempt: 1, status: 302, success: false, error: null, response_excerpt: 'moved' });
    await sleep(2500); // the retries, all inside the window
    expect((await deliveries(srv.call, id)).length).toBeGreaterThan(1);
    expect(elsewhere.received).toEqual([]);
  });
});

describe('SSRF guard (server without an allowlist)', () => {
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });
  const srv = useServer({ env: { STOWAGE_OUTBOUND_ALLOW: '' } });

  it('never contacts a loopback, private or localhost target; records one refused attempt each', async () => {
    const keys = await srv.server.createProject();
    const call = restClient(srv.rest, keys);
    const targets = [receiver.url, `http://localhost:${receiver.port}/hook`, 'http://10.1.2.3/hook', 'http://[::1]:9/hook', 'http://169.254.169.254/latest/meta-data/'];
    const ids: number[] = [];
    for (const target_url of targets) {
      const r = await call('POST', '/webhooks/', form({ target_url, event: 'file.uploaded' }));
      expect(r.status).toBe(201);
      ids.push(r.json.id);
    }
    await uploadBase(srv.upload, keys.public_key, [{ name: 'c.txt', data: 'c' }], { UPLOADCARE_STORE: '0' });
    for (const id of ids) {
      const recs = await eventually(async () => {
        const all = await deliveries(call, id);
        return all.length > 0 && all;
      }, 10_000, `a refused attempt for hook ${id}`);
      expect(recs[0]).toMatchObject({ attempt: 1, status: null, success: false });
      expect(recs[0]!.error).toContain('URLHostPrivateIPForbiddenError');
    }
    // Policy refusals are final: no second attempt, and the receiver never saw a request.
    await sleep(1500);
    for (const id of ids) expect((await deliveries(call, id)).length).toBe(1);
    expect(receiver.received).toEqual([]);
  });
});
