/**
 * Upload API throttling per client address: a fresh random public key per
 * request no longer gets a fresh bucket, and one client with a borrowed public key cannot drain the
 * project's bucket for everyone. Clients at several addresses arrive through a trusted "proxy" on
 * loopback (STOWAGE_TRUSTED_PROXIES), which is how the client address is taken behind one.
 */
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { get } from './helpers.js';

const srv = useServer({
  env: {
    STOWAGE_TRUSTED_PROXIES: '127.0.0.1',
    // Buckets that do not refill during the test: counts are exact.
    STOWAGE_RATE_UPLOAD_IP_PER_SEC: '0.001',
    STOWAGE_RATE_UPLOAD_IP_BURST: '5',
    STOWAGE_RATE_UPLOAD_PER_SEC: '0.001',
    STOWAGE_RATE_UPLOAD_BURST: '8',
  },
});

/** Statuses of /info/ calls from `client`, one public key per call. */
async function statuses(client: string, pubKeys: string[], xff = client): Promise<number[]> {
  const out: number[] = [];
  for (const pub of pubKeys) {
    const r = await get(`${srv.upload}/info/?pub_key=${pub}&file_id=${crypto.randomUUID()}`, { 'x-forwarded-for': xff });
    out.push(r.status);
  }
  return out;
}

const randomKeys = (n: number) => Array.from({ length: n }, () => crypto.randomBytes(10).toString('hex'));

describe('Upload API throttling by client address', () => {
  it('a random pub_key per request counts against the client address', async () => {
    expect(await statuses('198.51.100.1', randomKeys(7))).toEqual([403, 403, 403, 403, 403, 429, 429]);
    // Another client is not affected.
    expect(await statuses('198.51.100.2', randomKeys(1))).toEqual([403]);
  });

  it('one client with a known public key cannot drain the project for another client', async () => {
    const key = Array.from({ length: 7 }, () => srv.keys.public_key);
    // 5 from the first client's own bucket, then 429 while the project still has 3 left...
    expect(await statuses('198.51.100.3', key)).toEqual([404, 404, 404, 404, 404, 429, 429]);
    // ...which another client gets; then the project's bucket is empty for everyone.
    expect(await statuses('198.51.100.4', key.slice(0, 4))).toEqual([404, 404, 404, 429]);
  });

  it('addresses a client prepends to X-Forwarded-For do not give it new buckets', async () => {
    // The trusted proxy appends the real client last; what comes before is the client's own claim.
    const spoofed: number[] = [];
    for (let i = 0; i < 7; i++) spoofed.push(...(await statuses('198.51.100.5', randomKeys(1), `10.9.8.${i}, 198.51.100.5`)));
    expect(spoofed).toEqual([403, 403, 403, 403, 403, 429, 429]);
  });

  it('the 429 carries Retry-After in both error forms', async () => {
    const plain = await get(`${srv.upload}/info/?pub_key=nope&file_id=x`, { 'x-forwarded-for': '198.51.100.1' });
    expect([plain.status, plain.text]).toEqual([429, 'Request was throttled.']);
    expect(Number(plain.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const json = await get(`${srv.upload}/info/?pub_key=nope&file_id=x&jsonerrors=1`, { 'x-forwarded-for': '198.51.100.1' });
    expect(json.json).toEqual({ error: { status_code: 429, content: 'Request was throttled.', error_code: 'RequestThrottledError' } });
  });
});
