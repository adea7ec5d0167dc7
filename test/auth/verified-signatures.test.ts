import { describe, expect, it } from 'vitest';
import { signRestRequest, verifyRestAuth, type RestAuthRequest } from '../../src/auth/rest-signature.js';
import { VerifiedSignatures } from '../../src/auth/verified-signatures.js';

const SECRET = 'a'.repeat(40);
const date = 'Tue, 24 Nov 2026 10:00:00 GMT';
const nowMs = Date.UTC(2026, 10, 24, 10, 0, 0);

function request(secret: string, uri = '/files/'): RestAuthRequest {
  const sig = signRestRequest(secret, { method: 'GET', body: '', contentType: 'application/json', date, uri });
  return { method: 'GET', uri, body: Buffer.alloc(0), secure: false, headers: { authorization: `Svc pub1:${sig}`, date, 'content-type': 'application/json' } };
}

describe('verified signatures (a repeated signed request skips the HMAC)', () => {
  it('accepts a repeat, and refuses it once the secrets list no longer holds its secret', async () => {
    const verified = new VerifiedSignatures();
    const current = [SECRET];
    const lookup = (secrets: string[]) => async () => ({ projectId: 7, secrets });
    expect(await verifyRestAuth(request(SECRET), lookup(current), { aliases: false, nowMs, verified })).toBe(7);
    expect(await verifyRestAuth(request(SECRET), lookup(current), { aliases: false, nowMs, verified })).toBe(7);
    // The secret was revoked: the project cache hands out a new list without it.
    await expect(verifyRestAuth(request(SECRET), lookup(['b'.repeat(40)]), { aliases: false, nowMs, verified })).rejects.toMatchObject({ status: 401 });
  });

  it('still checks the date window and the message on a repeat', async () => {
    const verified = new VerifiedSignatures();
    const secrets = [SECRET];
    const lookup = async () => ({ projectId: 7, secrets });
    expect(await verifyRestAuth(request(SECRET), lookup, { aliases: false, nowMs, verified })).toBe(7);
    await expect(verifyRestAuth(request(SECRET), lookup, { aliases: false, nowMs: nowMs + 16 * 60_000, verified })).rejects.toMatchObject({ status: 401 });
    // The same signature sent for another URI is not the verified message.
    const other = request(SECRET);
    other.uri = '/files/?limit=1';
    await expect(verifyRestAuth(other, lookup, { aliases: false, nowMs, verified })).rejects.toMatchObject({ status: 401 });
  });

  it('keeps at most its bound of entries', () => {
    const verified = new VerifiedSignatures(2);
    const secrets = [SECRET];
    verified.add('a', secrets);
    verified.add('b', secrets);
    verified.add('c', secrets);
    expect(verified.has('a', secrets)).toBe(false);
    expect(verified.has('c', secrets)).toBe(true);
  });
});
