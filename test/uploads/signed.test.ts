/**
 * Signed uploads over HTTP: every claim rule and error code of the spec's table (status, code and
 * message, plain and jsonerrors), the legacy signature, precedence, scope per endpoint, atomic
 * operation spending, and the admin commands that switch the requirement.
 */
import crypto from 'node:crypto';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { request, type Res } from '../helpers/http.js';
import { postQuery, until } from './helpers.js';

const srv = useServer({ env: { STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8' }, project: ['--signed-uploads'] });
const MIN = 10_485_760;

const now = () => Math.floor(Date.now() / 1000);

async function token(claims: Record<string, unknown>, secret = srv.keys.secret_key, alg = 'HS256'): Promise<string> {
  const key = crypto.createHash('sha256').update(secret, 'utf8').digest();
  return new SignJWT(claims).setProtectedHeader({ alg, typ: 'JWT' }).sign(key);
}
const legacy = (expire: number | string, secret = srv.keys.secret_key) => crypto.createHmac('sha256', secret).update(String(expire)).digest('hex');

interface Call {
  auth?: string;
  fields?: Record<string, string>;
  query?: string;
  files?: number;
  pub?: string;
}

async function base(c: Call = {}): Promise<Res> {
  const form = new FormData();
  for (let i = 0; i < (c.files ?? 1); i++) form.append(`file${i}`, new Blob([`data ${i}`]), `f${i}.txt`);
  form.append('UPLOADCARE_PUB_KEY', c.pub ?? srv.keys.public_key);
  for (const [k, v] of Object.entries(c.fields ?? {})) form.append(k, v);
  return request(`${srv.upload}/base/${c.query ?? ''}`, { method: 'POST', body: form, headers: c.auth ? { authorization: c.auth } : {} });
}
const startMultipart = (c: Call = {}) =>
  postQuery(`${srv.upload}/multipart/start/`, { UPLOADCARE_PUB_KEY: srv.keys.public_key, filename: 'x.bin', size: String(MIN), content_type: 'application/octet-stream', ...(c.fields ?? {}) }, c.auth ? { authorization: c.auth } : {});
const fromUrl = (c: Call = {}) =>
  postQuery(`${srv.upload}/from_url/`, { pub_key: srv.keys.public_key, source_url: 'http://127.0.0.1:9/file.bin', ...(c.fields ?? {}) }, c.auth ? { authorization: c.auth } : {});

const bearer = async (claims: Record<string, unknown>) => `Bearer ${await token(claims)}`;
const valid = (extra: Record<string, unknown> = {}) => bearer({ iat: now(), exp: now() + 600, ...extra });

/** Plain-text errors carry status and message only; `_code` documents what the jsonerrors form would say. */
function expectError(r: Res, status: number, _code: string, message: string | RegExp): void {
  expect(r.status).toBe(status);
  if (typeof message === 'string') expect(r.text).toBe(message);
  else expect(r.text).toMatch(message);
}

async function expectBoth(call: (c: Call) => Promise<Res>, c: Call, status: number, code: string, message: string | RegExp): Promise<void> {
  expectError(await call(c), status, code, message);
  const j = await call({ ...c, query: '?jsonerrors=1' });
  expect(j.status).toBe(200);
  expect(j.json.error.status_code).toBe(status);
  expect(j.json.error.error_code).toBe(code);
  if (typeof message === 'string') expect(j.json.error.content).toBe(message);
  else expect(j.json.error.content).toMatch(message);
}

describe('credentials are required when signed uploads are on', () => {
  it('refuses a request with neither token nor signature on every signed endpoint', async () => {
    await expectBoth(base, {}, 400, 'SignatureRequiredError', '`signature` is required.');
    expectError(await startMultipart(), 400, 'SignatureRequiredError', '`signature` is required.');
    expectError(await fromUrl(), 400, 'SignatureRequiredError', '`signature` is required.');
  });

  it('/from_url/ checks credentials before it resolves the host or classifies the address', async () => {
    const exp = now() + 600;
    for (const source_url of ['http://no-such-host.invalid/x', 'http://10.0.0.1/x']) {
      expectError(await fromUrl({ fields: { source_url } }), 400, 'SignatureRequiredError', '`signature` is required.');
      const forged = { source_url, signature: legacy(exp, 'not-a-key'), expire: String(exp) };
      expectError(await fromUrl({ fields: forged }), 403, 'SignatureInvalidError', 'Invalid signature.');
    }
    // An unknown public key is refused before anything else is looked at.
    const stranger = await postQuery(`${srv.upload}/from_url/`, { pub_key: 'no-such-key', source_url: 'http://no-such-host.invalid/x' });
    expectError(stranger, 403, 'ProjectPublicKeyInvalidError', 'pub_key is invalid.');
    // With valid credentials the same URLs get their own errors.
    expectError(await fromUrl({ auth: await valid(), fields: { source_url: 'http://no-such-host.invalid/x' } }), 400, 'HostnameNotFoundError', 'Host does not exist.');
    expectError(await fromUrl({ auth: await valid(), fields: { source_url: 'http://10.0.0.1/x' } }), 400, 'URLHostPrivateIPForbiddenError', 'Only public IPs are allowed.');
  });
});

describe('legacy signature + expire', () => {
  it('accepts a valid pair as form fields or in the query string, with any of the project keys', async () => {
    const exp = now() + 600;
    expect((await base({ fields: { signature: legacy(exp), expire: String(exp) } })).status).toBe(200);
    expect((await base({ query: `?signature=${legacy(exp)}&expire=${exp}` })).status).toBe(200);
    const added = JSON.parse(srv.server.cli(['key', 'add', '--pub-key', srv.keys.public_key, '--json'])) as { secret_key: string };
    expect((await base({ fields: { signature: legacy(exp, added.secret_key), expire: String(exp) } })).status).toBe(200);
    // It allows every endpoint.
    expect((await startMultipart({ fields: { signature: legacy(exp), expire: String(exp) } })).status).toBe(200);
    expect((await fromUrl({ fields: { signature: legacy(exp), expire: String(exp) } })).status).toBe(200);
  });

  it('names each problem with the spec’s code and status', async () => {
    const exp = now() + 600;
    await expectBoth(base, { fields: { signature: legacy(exp) } }, 400, 'SignatureExpirationRequiredError', '`expire` is required.');
    await expectBoth(base, { fields: { signature: legacy(exp), expire: 'tomorrow' } }, 400, 'SignatureExpirationInvalidError', '`expire` must be a UNIX timestamp.');
    await expectBoth(base, { fields: { signature: legacy(now() - 10), expire: String(now() - 10) } }, 403, 'SignatureExpirationError', 'Expired signature.');
    await expectBoth(base, { fields: { signature: legacy(exp, 'not-a-key'), expire: String(exp) } }, 403, 'SignatureInvalidError', 'Invalid signature.');
    await expectBoth(base, { fields: { signature: legacy(exp + 1), expire: String(exp) } }, 403, 'SignatureInvalidError', 'Invalid signature.');
  });

  it('wins over an Authorization header', async () => {
    const exp = now() + 600;
    expect((await base({ auth: 'Bearer garbage', fields: { signature: legacy(exp), expire: String(exp) } })).status).toBe(200);
    const r = await base({ auth: await valid(), fields: { signature: 'bad', expire: String(exp) } });
    expectError(r, 403, 'SignatureInvalidError', 'Invalid signature.');
  });
});

describe('JWT tokens: claim rules', () => {
  it('accepts a valid token and the edges of the skew and lifetime rules', async () => {
    expect((await base({ auth: await valid() })).status).toBe(200);
    expect((await base({ auth: await bearer({ iat: now() + 20, exp: now() + 600 }) })).status).toBe(200);
    expect((await base({ auth: await bearer({ iat: now() - 600, exp: now() - 20 }) })).status).toBe(200);
    expect((await base({ auth: await bearer({ iat: now(), exp: now() + 86400 }) })).status).toBe(200);
    expect((await base({ auth: await bearer({ iat: now(), exp: now() + 600, iss: 'a', sub: 'b', jti: 'c', nbf: now() + 9999, aud: 'x' }) })).status).toBe(200);
  });

  const bad: Array<[string, () => Promise<string>, number, string, RegExp]> = [
    ['a non-Bearer header', async () => 'Basic abc', 401, 'AccessTokenInvalidError', /^Invalid access token: .*Bearer/],
    ['an unreadable token', async () => 'Bearer not.a.jwt!', 401, 'AccessTokenInvalidError', /not a readable JWT/],
    ['a token signed with no project key', async () => `Bearer ${await token({ iat: now(), exp: now() + 60 }, 'other-secret')}`, 401, 'AccessTokenInvalidError', /matches no secret key/],
    ['the hex text of the digest as key', async () => `Bearer ${await new SignJWT({ iat: now(), exp: now() + 60 }).setProtectedHeader({ alg: 'HS256' }).sign(Buffer.from(crypto.createHash('sha256').update(srv.keys.secret_key).digest('hex')))}`, 401, 'AccessTokenInvalidError', /matches no secret key/],
    ['another algorithm', async () => `Bearer ${await token({ iat: now(), exp: now() + 60 }, srv.keys.secret_key, 'HS512')}`, 401, 'AccessTokenInvalidError', /HS256/],
    ['no iat', () => bearer({ exp: now() + 60 }), 401, 'AccessTokenInvalidError', /"iat"/],
    ['iat in the future', () => bearer({ iat: now() + 120, exp: now() + 600 }), 401, 'AccessTokenInvalidError', /"iat" is in the future/],
    ['no exp', () => bearer({ iat: now() }), 401, 'AccessTokenInvalidError', /"exp"/],
    ['a lifetime over 24 h', () => bearer({ iat: now(), exp: now() + 86401 }), 401, 'AccessTokenInvalidError', /24 hours/],
    ['a non-string sub', () => bearer({ iat: now(), exp: now() + 60, sub: 5 }), 401, 'AccessTokenInvalidError', /"sub"/],
    ['an unknown uc key', () => valid({ uc: { restrictions: {}, extra: 1 } }), 401, 'AccessTokenInvalidError', /unknown key "uc.extra"/],
    ['an unknown restrictions key', () => valid({ uc: { restrictions: { files: 1 } } }), 401, 'AccessTokenInvalidError', /unknown key "uc.restrictions.files"/],
    ['an unknown limits key', () => valid({ uc: { restrictions: { limits: { bytes: 1 } } } }), 401, 'AccessTokenInvalidError', /unknown key "uc.restrictions.limits.bytes"/],
    ['an empty scope', () => valid({ uc: { restrictions: { scope: [] } } }), 401, 'AccessTokenInvalidError', /scope/],
    ['17 scope items', () => valid({ uc: { restrictions: { scope: Array.from({ length: 17 }, (_, i) => `/p${i}/`) } } }), 401, 'AccessTokenInvalidError', /scope/],
    ['a scope item not starting with /', () => valid({ uc: { restrictions: { scope: ['base/'] } } }), 401, 'AccessTokenInvalidError', /scope/],
    ['a scope item over 64 characters', () => valid({ uc: { restrictions: { scope: [`/${'a'.repeat(64)}/`] } } }), 401, 'AccessTokenInvalidError', /scope/],
    ['operations 0', () => valid({ uc: { restrictions: { limits: { operations: 0 } } } }), 401, 'AccessTokenInvalidError', /operations/],
    ['operations 100001', () => valid({ uc: { restrictions: { limits: { operations: 100001 } } } }), 401, 'AccessTokenInvalidError', /operations/],
    ['fractional operations', () => valid({ uc: { restrictions: { limits: { operations: 1.5 } } } }), 401, 'AccessTokenInvalidError', /operations/],
    ['an expired token', () => bearer({ iat: now() - 600, exp: now() - 60 }), 401, 'AccessTokenExpiredError', /expired/],
  ];
  it.each(bad)('refuses %s', async (_name, auth, status, code, message) => {
    await expectBoth(base, { auth: await auth() }, status, code, message);
  });
});

describe('scope per endpoint', () => {
  it('allows exact paths and /* prefixes, and names the required path otherwise', async () => {
    const only = (scope: string[]) => valid({ uc: { restrictions: { scope } } });
    const baseOnly = await only(['/base/']);
    expect((await base({ auth: baseOnly })).status).toBe(200);
    expectError(await startMultipart({ auth: baseOnly }), 403, 'ScopeForbiddenError', /\/multipart\/start\//);
    expectError(await fromUrl({ auth: baseOnly }), 403, 'ScopeForbiddenError', /\/from_url\//);
    const multipart = await only(['/multipart/*']);
    expect((await startMultipart({ auth: multipart })).status).toBe(200);
    expectError(await base({ auth: multipart }), 403, 'ScopeForbiddenError', /\/base\//);
    const urls = await only(['/from_url/']);
    expect((await fromUrl({ auth: urls })).status).toBe(200);
    const all = await only(['/*']);
    for (const r of [await base({ auth: all }), await startMultipart({ auth: all }), await fromUrl({ auth: all })]) expect(r.status).toBe(200);
    const j = await postQuery(`${srv.upload}/from_url/`, { pub_key: srv.keys.public_key, source_url: 'http://127.0.0.1:9/x', jsonerrors: '1' }, { authorization: baseOnly });
    expect(j.json.error).toMatchObject({ status_code: 403, error_code: 'ScopeForbiddenError' });
  });
});

describe('operations', () => {
  const limited = (n: number) => valid({ jti: crypto.randomUUID(), uc: { restrictions: { limits: { operations: n } } } });

  it('spends one per file on /base/ and one per start / from_url, then refuses', async () => {
    const t = await limited(4);
    expect((await base({ auth: t, files: 2 })).status).toBe(200);
    expect((await startMultipart({ auth: t })).status).toBe(200);
    expect((await fromUrl({ auth: t })).status).toBe(200);
    await expectBoth(base, { auth: t }, 403, 'OperationsLimitExceededError', /operations/);
    // A two-file request on a token with one operation left is refused whole.
    const u = await limited(1);
    expectError(await base({ auth: u, files: 2 }), 403, 'OperationsLimitExceededError', /operations/);
    expect((await base({ auth: u })).status).toBe(200);
  });

  it('4xx responses spend nothing', async () => {
    const t = await limited(1);
    expect((await base({ auth: t, fields: { UPLOADCARE_STORE: 'maybe' } })).status).toBe(400);
    expect((await base({ auth: t, fields: { 'metadata[bad key!]': 'v' } })).status).toBe(400);
    expect((await startMultipart({ auth: t, fields: { size: '5' } })).status).toBe(400);
    expect((await fromUrl({ auth: t, fields: { source_url: 'ftp://example.com/' } })).status).toBe(400);
    expect((await fromUrl({ auth: t, fields: { source_url: 'http://10.0.0.1/' } })).status).toBe(400);
    expect((await base({ auth: t })).status).toBe(200);
    expect((await base({ auth: t })).status).toBe(403);
  });

  it('50 concurrent uploads against a token with 10 operations succeed exactly 10 times', async () => {
    const t = await limited(10);
    const results = await Promise.all(Array.from({ length: 50 }, () => base({ auth: t })));
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(10);
    expect(new Set(ok.map((r) => r.json.file0)).size).toBe(10);
    for (const r of results.filter((x) => x.status !== 200)) expectError(r, 403, 'OperationsLimitExceededError', /operations/);
  });

  it('multipart completion needs no credentials of its own', async () => {
    const s = await startMultipart({ auth: await valid() });
    const parts = s.json.parts as string[];
    for (const [i, u] of parts.entries()) expect((await fetch(u, { method: 'PUT', body: Buffer.alloc(i === 0 ? 5_242_880 : MIN - 5_242_880, i) })).status).toBe(200);
    const done = await postQuery(`${srv.upload}/multipart/complete/`, { UPLOADCARE_PUB_KEY: srv.keys.public_key, uuid: s.json.uuid });
    expect(done.status).toBe(200);
    expect(done.json.size).toBe(MIN);
  });
});

describe('admin commands', () => {
  it('project create --signed-uploads and project set --signed-uploads on|off', async () => {
    const p = await srv.server.createProject(['--signed-uploads']);
    const listed = JSON.parse(srv.server.cli(['project', 'list', '--json'])) as Array<{ public_key: string; signed_uploads: boolean }>;
    expect(listed.find((x) => x.public_key === p.public_key)?.signed_uploads).toBe(true);
    expect((await base({ pub: p.public_key })).status).toBe(400);
    expect(srv.server.cli(['project', 'set', '--pub-key', p.public_key, '--signed-uploads', 'off'])).toContain('signed uploads off');
    await until(async () => ((await base({ pub: p.public_key })).status === 200 ? true : undefined), 10_000);
    expect(srv.server.cli(['project', 'set', '--pub-key', p.public_key, '--signed-uploads', 'on'])).toContain('signed uploads on');
    await until(async () => ((await base({ pub: p.public_key })).status === 400 ? true : undefined), 10_000);
    const plain = await srv.server.createProject();
    expect((await base({ pub: plain.public_key })).status).toBe(200);
  });
});
