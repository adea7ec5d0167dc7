import { createHash, createHmac } from 'node:crypto';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { operationsCost, scopeAllows, verifyUploadCredentials, type CredentialsInput } from '../../src/auth/upload-credentials.js';

const SECRET = 'project-secret-1';
const OTHER = 'project-secret-2';
const NOW_S = 1_800_000_000;
const NOW_MS = NOW_S * 1000;
const key = (s: string) => createHash('sha256').update(s).digest();

/** Signs arbitrary claims; iat/exp default to a valid 1 h token issued now. */
async function token(claims: Record<string, unknown> = {}, secret = SECRET, alg = 'HS256'): Promise<string> {
  return new SignJWT({ iat: NOW_S, exp: NOW_S + 3600, ...claims })
    .setProtectedHeader({ alg, typ: 'JWT' })
    .sign(alg === 'HS256' ? key(secret) : createHash('sha512').update(secret).digest());
}
const verify = (over: Partial<CredentialsInput>) =>
  verifyUploadCredentials({ secrets: [SECRET, OTHER], endpointPath: '/base/', nowMs: NOW_MS, ...over });
const bearer = async (claims?: Record<string, unknown>, over: Partial<CredentialsInput> = {}) =>
  verify({ authorization: `Bearer ${await token(claims)}`, ...over });
/** Resolves to the error's [status, code] or 'ok'. */
const outcome = (p: Promise<unknown>) => p.then(() => 'ok', (e: { status: number; code: string }) => [e.status, e.code]);
const INVALID = [401, 'AccessTokenInvalidError'];

describe('JWT token', () => {
  it('a valid token grants unlimited, unscoped access and a stable tokenId', async () => {
    const t = await token({ sub: 'client-7', iss: 'backend', jti: 'j1' });
    const grant = await verify({ authorization: `Bearer ${t}` });
    expect(grant).toMatchObject({ kind: 'token', operationsLimit: null, scope: null });
    expect(grant.tokenId).toBe(createHash('sha256').update(t).digest('hex'));
    expect(grant.claims).toMatchObject({ sub: 'client-7' });
  });

  it('any of the project secret keys may have signed', async () => {
    await expect(verify({ authorization: `Bearer ${await token({}, OTHER)}` })).resolves.toMatchObject({ kind: 'token' });
  });

  it('the key is the raw SHA-256 digest, not its hex text nor the secret itself', async () => {
    const hexKeyed = await new SignJWT({ iat: NOW_S, exp: NOW_S + 60 }).setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(createHash('sha256').update(SECRET).digest('hex')));
    const rawKeyed = await new SignJWT({ iat: NOW_S, exp: NOW_S + 60 }).setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(SECRET.padEnd(32, '!')));
    for (const t of [hexKeyed, rawKeyed]) await expect(outcome(verify({ authorization: `Bearer ${t}` }))).resolves.toEqual(INVALID);
  });

  it.each([
    ['Token abc.def.ghi', 'Authorization header'],
    ['Bearer', 'Authorization header'],
    ['Basic dXNlcjpwYXNz', 'Authorization header'],
    ['Bearer not-a-jwt', 'not a readable JWT'],
    ['Bearer a.b.c', 'not a readable JWT'],
    ['Bearer a.b.c.d.e', 'not a readable JWT'],
  ])('malformed %j -> AccessTokenInvalidError naming the reason', async (authorization, reason) => {
    await expect(verify({ authorization })).rejects.toMatchObject({ status: 401, code: 'AccessTokenInvalidError', message: expect.stringContaining(reason) });
  });

  it('accepts a lower-case bearer scheme', async () => {
    await expect(outcome(verify({ authorization: `bearer ${await token()}` }))).resolves.toBe('ok');
  });

  it('signature matching no secret key -> invalid', async () => {
    await expect(verify({ authorization: `Bearer ${await token({}, 'someone-else')}` })).rejects.toMatchObject({
      code: 'AccessTokenInvalidError', message: expect.stringContaining('matches no secret key'),
    });
    await expect(outcome(verify({ authorization: `Bearer ${await token()}`, secrets: [] }))).resolves.toEqual(INVALID);
  });

  it('a tampered payload -> invalid', async () => {
    const [h, , s] = (await token()).split('.');
    const forged = Buffer.from(JSON.stringify({ iat: NOW_S, exp: NOW_S + 60, uc: {} })).toString('base64url');
    await expect(outcome(verify({ authorization: `Bearer ${h}.${forged}.${s}` }))).resolves.toEqual(INVALID);
  });

  it('other algorithms (HS512, none) -> invalid', async () => {
    await expect(outcome(verify({ authorization: `Bearer ${await token({}, SECRET, 'HS512')}` }))).resolves.toEqual(INVALID);
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(`{"iat":${NOW_S},"exp":${NOW_S + 60}}`).toString('base64url')}.`;
    await expect(outcome(verify({ authorization: `Bearer ${none}` }))).resolves.toEqual(INVALID);
  });

  describe('iat', () => {
    it.each([
      ['missing', { iat: undefined }, INVALID],
      ['not a number', { iat: '1800000000' }, INVALID],
      ['now + 30 s (skew edge) is accepted', { iat: NOW_S + 30, exp: NOW_S + 60 }, 'ok'],
      ['now + 31 s is in the future', { iat: NOW_S + 31, exp: NOW_S + 60 }, INVALID],
      ['in the past is fine', { iat: NOW_S - 3600, exp: NOW_S + 60 }, 'ok'],
    ])('%s', async (_n, claims, expected) => {
      await expect(outcome(bearer(claims))).resolves.toEqual(expected);
    });
    it('names the reason', async () => {
      await expect(bearer({ iat: NOW_S + 31 })).rejects.toThrow('"iat" is in the future');
    });
  });

  describe('exp', () => {
    it.each([
      ['missing', { exp: undefined }, INVALID],
      ['not a number', { exp: null }, INVALID],
      ['lifetime exactly 24 h is accepted', { iat: NOW_S, exp: NOW_S + 86_400 }, 'ok'],
      ['lifetime 24 h + 1 s is refused', { iat: NOW_S, exp: NOW_S + 86_401 }, INVALID],
      ['expired 30 s ago (skew edge) is accepted', { iat: NOW_S - 600, exp: NOW_S - 30 }, 'ok'],
      ['expired 31 s ago -> AccessTokenExpiredError', { iat: NOW_S - 600, exp: NOW_S - 31 }, [401, 'AccessTokenExpiredError']],
    ])('%s', async (_n, claims, expected) => {
      await expect(outcome(bearer(claims))).resolves.toEqual(expected);
    });
    it('names the reason for a too long lifetime', async () => {
      await expect(bearer({ exp: NOW_S + 86_401 })).rejects.toThrow('exceeds 24 hours');
    });
  });

  it.each(['iss', 'sub', 'jti'])('%s must be a string when present', async (name) => {
    await expect(outcome(bearer({ [name]: 42 }))).resolves.toEqual(INVALID);
    await expect(outcome(bearer({ [name]: 'x' }))).resolves.toBe('ok');
  });

  it('other standard claims (nbf, aud) are ignored', async () => {
    await expect(outcome(bearer({ nbf: NOW_S + 10_000, aud: 'anyone' }))).resolves.toBe('ok');
  });

  describe('uc', () => {
    const ucWith = (restrictions: unknown) => ({ uc: { restrictions } });
    it.each([
      ['unknown key under uc', { uc: { restrictions: {}, extra: 1 } }],
      ['unknown key under uc.restrictions', ucWith({ scope: ['/base/'], foo: true })],
      ['unknown key under uc.restrictions.limits', ucWith({ limits: { operations: 5, bytes: 10 } })],
      ['uc not an object', { uc: 'all' }],
      ['restrictions an array', ucWith([])],
    ])('%s -> invalid', async (_n, claims) => {
      await expect(outcome(bearer(claims))).resolves.toEqual(INVALID);
    });
    it('names the unknown key', async () => {
      await expect(bearer({ uc: { foo: 1 } })).rejects.toThrow('unknown key "uc.foo"');
    });
    it('empty uc and restrictions mean no restriction', async () => {
      await expect(bearer({ uc: {} })).resolves.toMatchObject({ scope: null, operationsLimit: null });
      await expect(bearer(ucWith({}))).resolves.toMatchObject({ scope: null, operationsLimit: null });
    });
  });

  describe('uc.restrictions.scope', () => {
    const scoped = (scope: unknown, endpointPath = '/base/') => bearer({ uc: { restrictions: { scope } } }, { endpointPath });
    const items = (n: number) => Array.from({ length: n }, (_, i) => (i === 0 ? '/base/' : `/p${i}/`));
    it.each([
      ['16 items', items(16), 'ok'],
      ['17 items', items(17), INVALID],
      ['empty list', [], INVALID],
      ['not a list', '/base/', INVALID],
      ['item of 64 chars', ['/base/', `/${'a'.repeat(63)}`], 'ok'],
      ['item of 65 chars', ['/base/', `/${'a'.repeat(64)}`], INVALID],
      ['item not starting with /', ['base/'], INVALID],
      ['non-string item', ['/base/', 7], INVALID],
    ])('%s', async (_n, scope, expected) => {
      await expect(outcome(scoped(scope))).resolves.toEqual(expected);
    });

    it.each([
      [['/base/'], '/base/', 'ok'],
      [['/base/'], '/from_url/', [403, 'ScopeForbiddenError']],
      [['/base'], '/base/', [403, 'ScopeForbiddenError']],
      [['/multipart/*'], '/multipart/start/', 'ok'],
      [['/multipart/*'], '/base/', [403, 'ScopeForbiddenError']],
      [['/*'], '/group/', 'ok'],
      [['/from_url/', '/group/'], '/group/', 'ok'],
    ])('scope %j on %s', async (scope, endpointPath, expected) => {
      await expect(outcome(scoped(scope, endpointPath))).resolves.toEqual(expected);
    });

    it('ScopeForbiddenError names the required path', async () => {
      await expect(scoped(['/base/'], '/from_url/')).rejects.toThrow('/from_url/');
    });
    it('the grant carries the scope', async () => {
      await expect(scoped(['/base/', '/group/'])).resolves.toMatchObject({ scope: ['/base/', '/group/'] });
    });
  });

  describe('uc.restrictions.limits.operations', () => {
    const limited = (operations: unknown) => bearer({ uc: { restrictions: { limits: { operations } } } });
    it.each([
      [1, 'ok'], [100_000, 'ok'], [0, INVALID], [100_001, INVALID], [1.5, INVALID], ['10', INVALID], [-1, INVALID],
    ])('operations %j', async (ops, expected) => {
      await expect(outcome(limited(ops))).resolves.toEqual(expected);
    });
    it('the grant carries the limit', async () => {
      await expect(limited(10)).resolves.toMatchObject({ operationsLimit: 10 });
    });
  });
});

describe('legacy signature', () => {
  const sign = (expire: string, secret = SECRET) => createHmac('sha256', secret).update(expire).digest('hex');
  const EXP = String(NOW_S + 600);

  it('a valid signature with any secret key grants everything', async () => {
    await expect(verify({ signature: sign(EXP), expire: EXP })).resolves.toMatchObject({ kind: 'signature', operationsLimit: null, scope: null });
    await expect(outcome(verify({ signature: sign(EXP, OTHER), expire: EXP, endpointPath: '/group/' }))).resolves.toBe('ok');
    await expect(outcome(verify({ signature: sign(EXP).toUpperCase(), expire: EXP }))).resolves.toBe('ok');
  });

  it.each([
    ['no credentials at all', {}, 400, 'SignatureRequiredError', '`signature` is required.'],
    ['expire without signature', { expire: EXP }, 400, 'SignatureRequiredError', '`signature` is required.'],
    ['empty signature', { signature: '', expire: EXP }, 400, 'SignatureRequiredError', '`signature` is required.'],
    ['signature without expire', { signature: 'ab' }, 400, 'SignatureExpirationRequiredError', '`expire` is required.'],
    ['expire not a number', { signature: 'ab', expire: 'soon' }, 400, 'SignatureExpirationInvalidError', '`expire` must be a UNIX timestamp.'],
    ['expire fractional', { signature: 'ab', expire: '1800000000.5' }, 400, 'SignatureExpirationInvalidError', '`expire` must be a UNIX timestamp.'],
    ['expire negative', { signature: 'ab', expire: '-5' }, 400, 'SignatureExpirationInvalidError', '`expire` must be a UNIX timestamp.'],
    ['expire in the past', { signature: sign(String(NOW_S - 1)), expire: String(NOW_S - 1) }, 403, 'SignatureExpirationError', 'Expired signature.'],
    ['wrong signature', { signature: sign(EXP, 'nope'), expire: EXP }, 403, 'SignatureInvalidError', 'Invalid signature.'],
    ['signature over another expire', { signature: sign(String(NOW_S + 601)), expire: EXP }, 403, 'SignatureInvalidError', 'Invalid signature.'],
    ['truncated signature', { signature: sign(EXP).slice(0, 10), expire: EXP }, 403, 'SignatureInvalidError', 'Invalid signature.'],
  ])('%s', async (_n, params, status, code, message) => {
    await expect(verify(params)).rejects.toMatchObject({ status, code, message });
  });

  it('expire equal to now is still valid', async () => {
    await expect(outcome(verify({ signature: sign(String(NOW_S)), expire: String(NOW_S) }))).resolves.toBe('ok');
  });

  it('a signature wins over an Authorization header', async () => {
    const good = `Bearer ${await token()}`;
    // valid token + bad signature: the signature is checked, so the request fails
    await expect(outcome(verify({ authorization: good, signature: sign(EXP, 'nope'), expire: EXP }))).resolves.toEqual([403, 'SignatureInvalidError']);
    // garbage header + valid signature: the header is ignored
    await expect(verify({ authorization: 'Bearer garbage', signature: sign(EXP), expire: EXP })).resolves.toMatchObject({ kind: 'signature' });
  });
});

describe('operationsCost', () => {
  it.each([
    ['/base/', 3, 3], ['/base/', 1, 1], ['/multipart/start/', 1, 1], ['/from_url/', 1, 1], ['/group/', 5, 0], ['/info/', 1, 0],
  ])('%s with %d files costs %d', (path, files, cost) => expect(operationsCost(path, files)).toBe(cost));
});

describe('scopeAllows', () => {
  it('null scope allows everything', () => expect(scopeAllows(null, '/anything/')).toBe(true));
});
