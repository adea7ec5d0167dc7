import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { startServer } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { restClient, sign } from '../helpers/rest.js';

const srv = useServer();

describe('REST authentication and versioning', () => {
  it('accepts a Svc-signed request with the neutral and the SDK identifiers', async () => {
    const a = await srv.call('GET', '/files/', { scheme: 'Svc', accept: 'application/vnd.svc-v0.7+json' });
    expect(a.status).toBe(200);
    expect(a.headers.get('content-type')).toBe('application/json');
    const b = await srv.call('GET', '/files/', { scheme: 'Uploadcare', dateHeader: 'X-Uploadcare-Date' });
    expect(b.status).toBe(200);
  });

  it('signs the URI with its raw query string', async () => {
    const r = await srv.call('GET', '/files/?limit=5&ordering=-datetime_uploaded');
    expect(r.status).toBe(200);
    expect(r.json.per_page).toBe(5);
  });

  it('accepts pyuploadcare date format with the extra comma', async () => {
    const d = new Date().toUTCString().replace(/(\d{4}) /, '$1, ');
    expect((await srv.call('GET', '/files/', { date: d })).status).toBe(200);
  });

  it('enforces the 15 minute date window at its edges', async () => {
    const at = (ms: number) => new Date(Date.now() + ms);
    expect((await srv.call('GET', '/files/', { date: at(-14 * 60_000 - 50_000) })).status).toBe(200);
    expect((await srv.call('GET', '/files/', { date: at(14 * 60_000 + 50_000) })).status).toBe(200);
    const old = await srv.call('GET', '/files/', { date: at(-15 * 60_000 - 5_000) });
    expect(old.status).toBe(401);
    expect((await srv.call('GET', '/files/', { date: at(15 * 60_000 + 5_000) })).status).toBe(401);
    expect(old.json.detail).toBe('Incorrect authentication credentials.');
  });

  it('answers each 401 text', async () => {
    const none = await srv.call('GET', '/files/', { authorization: null });
    expect(none.status).toBe(401);
    expect((await srv.call('GET', '/files/', { authorization: 'garbage' })).json.detail).toBe('Incorrect authentication credentials.');
    const unknown = await srv.call('GET', '/files/', { authorization: 'Uploadcare nosuchkey:abc' });
    expect(unknown).toMatchObject({ status: 401, json: { detail: 'Public key nosuchkey not found.' } });
    const badSig = await srv.call('GET', '/files/', { authorization: `Uploadcare ${srv.keys.public_key}:${'0'.repeat(40)}` });
    expect(badSig).toMatchObject({ status: 401, json: { detail: 'Invalid signature. Please check your Secret key.' } });
    const date = new Date().toUTCString();
    const wrongSecret = sign('not-the-secret', 'GET', '', 'application/json', date, '/files/');
    expect((await srv.call('GET', '/files/', { date, authorization: `Uploadcare ${srv.keys.public_key}:${wrongSecret}` })).json.detail).toBe(
      'Invalid signature. Please check your Secret key.',
    );
  });

  it('accepts Svc.Simple over plain HTTP from loopback, refuses it when a proxy relayed the request', async () => {
    const auth = `Uploadcare.Simple ${srv.keys.public_key}:${srv.keys.secret_key}`;
    expect((await srv.call('GET', '/files/', { authorization: auth })).status).toBe(200);
    expect((await srv.call('GET', '/files/', { authorization: `Svc.Simple ${srv.keys.public_key}:${srv.keys.secret_key}` })).status).toBe(200);
    expect((await srv.call('GET', '/files/', { authorization: `Svc.Simple ${srv.keys.public_key}:wrongsecretwrongsecret` })).json.detail).toBe('Secret key not found.');
    // A proxy on this machine relays other clients' plain-HTTP requests: its headers say so.
    for (const headers of [{ 'x-forwarded-for': '203.0.113.9' }, { forwarded: 'for=203.0.113.9' }, { 'x-forwarded-proto': 'https' }]) {
      const relayed = await srv.call('GET', '/files/', { authorization: auth, headers });
      expect(relayed.status).toBe(400);
      expect(relayed.json.detail).toBe('Simple authentication over HTTP is forbidden. Please, use HTTPS or signed requests instead.');
    }
  });

  it('requires the versioned Accept header (406)', async () => {
    for (const accept of [null, 'application/json', 'application/vnd.uploadcare-v0.5+json', 'application/vnd.uploadcare-v0.8+json']) {
      const r = await srv.call('GET', '/files/', { accept });
      expect(r.status).toBe(406);
      expect(r.json.detail).toBe('Incorrect Accept header provided. Make sure to specify API version. Refer to REST API docs for details.');
    }
  });

  it('requires paths to end with a slash', async () => {
    expect((await srv.call('GET', '/files')).status).toBe(404);
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
      expect((await viaProxy('GET', '/files/', { authorization: auth, headers: { 'x-forwarded-proto': 'http' } })).status).toBe(400);
    } finally {
      await tls.stop();
      await proxied.stop();
    }
  });

  it('refuses Svc.Simple over plain HTTP from another address, and from loopback when switched off', async () => {
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((i) => i && !i.internal && i.family === 'IPv4')?.address;
    const [open, off] = await Promise.all([startServer({ env: { STOWAGE_HOST: '0.0.0.0' } }), startServer({ env: { STOWAGE_SIMPLE_AUTH_LOOPBACK: 'off' } })]);
    try {
      const k = await open.createProject();
      const auth = `Uploadcare.Simple ${k.public_key}:${k.secret_key}`;
      const port = new URL(open.rest).port;
      expect((await restClient(`http://127.0.0.1:${port}`, k)('GET', '/files/', { authorization: auth })).status).toBe(200);
      expect(external, 'this test needs a non-loopback IPv4 address').toBeDefined();
      const remote = await restClient(`http://${external}:${port}`, k)('GET', '/files/', { authorization: auth });
      expect(remote.status).toBe(400);
      expect(remote.json.detail).toBe('Simple authentication over HTTP is forbidden. Please, use HTTPS or signed requests instead.');
      // Signed requests from there still work: only the secret-in-the-header scheme is refused.
      expect((await restClient(`http://${external}:${port}`, k)('GET', '/files/')).status).toBe(200);

      const k2 = await off.createProject();
      const local = await restClient(off.rest, k2)('GET', '/files/', { authorization: `Svc.Simple ${k2.public_key}:${k2.secret_key}` });
      expect(local.status).toBe(400);
    } finally {
      await Promise.all([open.stop(), off.stop()]);
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
