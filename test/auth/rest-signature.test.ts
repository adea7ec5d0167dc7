import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type ProjectKeys, type TestServer } from '../helpers/server.js';
import { restClient, sign } from '../helpers/rest.js';

let server: TestServer;
let keys: ProjectKeys;
let call: ReturnType<typeof restClient>;

beforeAll(async () => {
  server = await startServer();
  keys = await server.createProject();
  call = restClient(server.rest, keys);
});
afterAll(async () => server?.stop());

describe('REST authentication and versioning', () => {
  it('accepts a Svc-signed request with the neutral and the SDK identifiers', async () => {
    const a = await call('GET', '/files/', { scheme: 'Svc', accept: 'application/vnd.svc-v0.7+json' });
    expect(a.status).toBe(200);
    expect(a.headers.get('content-type')).toBe('application/json');
    const b = await call('GET', '/files/', { scheme: 'Uploadcare', dateHeader: 'X-Uploadcare-Date' });
    expect(b.status).toBe(200);
  });

  it('signs the URI with its raw query string', async () => {
    const r = await call('GET', '/files/?limit=5&ordering=-datetime_uploaded');
    expect(r.status).toBe(200);
    expect(r.json.per_page).toBe(5);
  });

  it('accepts pyuploadcare date format with the extra comma', async () => {
    const d = new Date().toUTCString().replace(/(\d{4}) /, '$1, ');
    expect((await call('GET', '/files/', { date: d })).status).toBe(200);
  });

  it('enforces the 15 minute date window at its edges', async () => {
    const at = (ms: number) => new Date(Date.now() + ms);
    expect((await call('GET', '/files/', { date: at(-14 * 60_000 - 50_000) })).status).toBe(200);
    expect((await call('GET', '/files/', { date: at(14 * 60_000 + 50_000) })).status).toBe(200);
    const old = await call('GET', '/files/', { date: at(-15 * 60_000 - 5_000) });
    expect(old.status).toBe(401);
    expect((await call('GET', '/files/', { date: at(15 * 60_000 + 5_000) })).status).toBe(401);
    expect(old.json.detail).toBe('Incorrect authentication credentials.');
  });

  it('answers each 401 text', async () => {
    const none = await call('GET', '/files/', { authorization: null });
    expect(none.status).toBe(401);
    expect((await call('GET', '/files/', { authorization: 'garbage' })).json.detail).toBe('Incorrect authentication credentials.');
    const unknown = await call('GET', '/files/', { authorization: 'Uploadcare nosuchkey:abc' });
    expect(unknown).toMatchObject({ status: 401, json: { detail: 'Public key nosuchkey not found.' } });
    const badSig = await call('GET', '/files/', { authorization: `Uploadcare ${keys.public_key}:${'0'.repeat(40)}` });
    expect(badSig).toMatchObject({ status: 401, json: { detail: 'Invalid signature. Please check your Secret key.' } });
    const date = new Date().toUTCString();
    const wrongSecret = sign('not-the-secret', 'GET', '', 'application/json', date, '/files/');
    expect((await call('GET', '/files/', { date, authorization: `Uploadcare ${keys.public_key}:${wrongSecret}` })).json.detail).toBe(
      'Invalid signature. Please check your Secret key.',
    );
  });

  it('refuses Svc.Simple over plain HTTP and accepts it from a trusted proxy saying https', async () => {
    const simple = await call('GET', '/files/', { authorization: `Uploadcare.Simple ${keys.public_key}:${keys.secret_key}` });
    expect(simple.status).toBe(400);
    expect(simple.json.detail).toBe('Simple authentication over HTTP is forbidden. Please, use HTTPS or signed requests instead.');
    // Not trusted: the header alone changes nothing.
    const spoofed = await call('GET', '/files/', {
      authorization: `Uploadcare.Simple ${keys.public_key}:${keys.secret_key}`,
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(spoofed.status).toBe(400);
  });

  it('requires the versioned Accept header (406)', async () => {
    for (const accept of [null, 'application/json', 'application/vnd.uploadcare-v0.6+json']) {
      const r = await call('GET', '/files/', { accept });
      expect(r.status).toBe(406);
      expect(r.json.detail).toBe('Incorrect Accept header provided. Make sure to specify API version. Refer to REST API docs for details.');
    }
  });

  it('requires paths to end with a slash', async () => {
    expect((await call('GET', '/files')).status).toBe(404);
  });
});

describe('Svc.Simple over HTTPS', () => {
  it('is accepted over TLS and from a trusted proxy that says https', async () => {
    const { execFileSync } = await import('node:child_process');
    const fs = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-tls-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-keyout', `${dir}/key.pem`, '-out', `${dir}/cert.pem`], { stdio: 'ignore' });
    const tls = await startServer({ env: { STOWAGE_TLS_CERT_FILE: `${dir}/cert.pem`, STOWAGE_TLS_KEY_FILE: `${dir}/key.pem`, NODE_TLS_REJECT_UNAUTHORIZED: '0' } });
    const proxied = await startServer({ env: { STOWAGE_TRUSTED_PROXIES: '127.0.0.1' } });
    try {
      expect(tls.rest).toMatch(/^https:/);
      const tlsKeys = await tls.createProject();
      const { Agent } = await import('undici');
      const insecure = new Agent({ connect: { rejectUnauthorized: false } });
      const res = await fetch(`${tls.rest}/files/`, {
        headers: { accept: 'application/vnd.uploadcare-v0.7+json', authorization: `Uploadcare.Simple ${tlsKeys.public_key}:${tlsKeys.secret_key}` },
        dispatcher: insecure,
      } as RequestInit);
      expect(res.status).toBe(200);
      const wrong = await fetch(`${tls.rest}/files/`, {
        headers: { accept: 'application/vnd.uploadcare-v0.7+json', authorization: `Uploadcare.Simple ${tlsKeys.public_key}:wrongsecretwrongsecret` },
        dispatcher: insecure,
      } as RequestInit);
      expect(wrong.status).toBe(401);
      expect(((await wrong.json()) as { detail: string }).detail).toBe('Secret key not found.');

      const pk = await proxied.createProject();
      const viaProxy = restClient(proxied.rest, pk);
      const auth = `Uploadcare.Simple ${pk.public_key}:${pk.secret_key}`;
      expect((await viaProxy('GET', '/files/', { authorization: auth, headers: { 'x-forwarded-proto': 'https' } })).status).toBe(200);
      expect((await viaProxy('GET', '/files/', { authorization: auth })).status).toBe(400);
    } finally {
      await tls.stop();
      await proxied.stop();
    }
  });

  it('turns the SDK aliases off with one switch', async () => {
    const strict = await startServer({ env: { STOWAGE_SDK_ALIASES: 'false' } });
    try {
      const k = await strict.createProject();
      const c = restClient(strict.rest, k);
      expect((await c('GET', '/files/', { scheme: 'Svc', accept: 'application/vnd.svc-v0.7+json' })).status).toBe(200);
      expect((await c('GET', '/files/', { scheme: 'Uploadcare', accept: 'application/vnd.svc-v0.7+json' })).status).toBe(401);
      expect((await c('GET', '/files/', { scheme: 'Svc' })).status).toBe(406);
    } finally {
      await strict.stop();
    }
  });
});
