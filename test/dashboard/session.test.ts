/**
 * The dashboard's sign-in and session over real HTTP: pages and their headers, sign-in checks,
 * the cookie's flags, the REST API opened by the session (and only with the dashboard header and
 * a same-origin write), sign-out, a revoked key ending its sessions, admin-token sign-in.
 */
import { describe, expect, it } from 'vitest';
import { request, type Res } from '../helpers/http.js';
import { useServer } from '../helpers/use-server.js';

const ADMIN_TOKEN = 'admin-token-for-the-dashboard-suite-0123456789';
const ACCEPT = 'application/vnd.svc-v0.7+json';

const srv = useServer({ env: { STOWAGE_DASHBOARD_ADMIN_TOKEN: ADMIN_TOKEN } });

const origin = () => srv.rest;

function signIn(body: unknown, headers: Record<string, string> = { origin: origin() }): Promise<Res> {
  return request(`${srv.rest}/dashboard/api/login`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

/** Signs in and answers the cookie pair `name=value`. */
async function cookieFor(body: unknown): Promise<string> {
  const r = await signIn(body);
  expect(r.status, r.text).toBe(200);
  return (r.headers.get('set-cookie') ?? '').split(';')[0]!;
}

/** A REST call as the dashboard makes it: the cookie, the dashboard header, the API version. */
function viaSession(cookie: string, method: string, path: string, extra: Record<string, string> = {}, body?: string): Promise<Res> {
  return request(`${srv.rest}${path}`, { method, headers: { cookie, accept: ACCEPT, 'x-stowage-dashboard': '1', ...extra }, ...(body === undefined ? {} : { body }) });
}

describe('pages', () => {
  it('serves the page with a strict CSP and no inline script', async () => {
    const r = await request(`${srv.rest}/dashboard/`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = r.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(r.headers.get('x-frame-options')).toBe('DENY');
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    // Every <script> names a file: nothing inline for the CSP to allow.
    expect(r.text.match(/<script[^>]*>[^<]+<\/script>/g)).toBeNull();
    const moved = await fetch(`${srv.rest}/dashboard`, { redirect: 'manual' });
    expect(moved.status).toBe(302);
    expect(moved.headers.get('location')).toBe('/dashboard/');
  });

  it('serves its modules and the widget by name, and nothing else', async () => {
    const app = await request(`${srv.rest}/dashboard/app.js`);
    expect(app.status).toBe(200);
    expect(app.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await request(`${srv.rest}/dashboard/uc/file-uploader.iife.min.js`)).status).toBe(200);
    for (const path of ['/dashboard/nope.js', '/dashboard/..%2fpackage.json', '/dashboard/uc/..%2f..%2fpackage.json', '/dashboard/uc/file-uploader.min.js']) {
      expect((await request(`${srv.rest}${path}`)).status, path).toBe(404);
    }
  });
});

describe('the first URLs a new user opens', () => {
  it('the start banner names the dashboard and the docs pages', () => {
    const out = srv.server.output();
    expect(out).toContain(`Dashboard:  ${srv.rest}/dashboard/`);
    expect(out).toContain(`API docs:   ${srv.rest}/docs/ (REST), ${srv.upload}/docs/ (Upload)`);
  });

  it('the REST root answers a browser with a page pointing to them, and other clients with a JSON 404 naming them', async () => {
    const browser = await request(`${srv.rest}/`, { headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } });
    expect(browser.status).toBe(200);
    expect(browser.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(browser.headers.get('content-security-policy')).toContain("default-src 'none'");
    const links = [...browser.text.matchAll(/href="([^"]+)"/g)].map((m) => m[1]);
    expect(links).toEqual(['/dashboard/', '/docs/', '/openapi.json', `${srv.upload}/docs/`]);
    for (const link of links.slice(0, 3)) expect((await request(new URL(link!, srv.rest).toString())).status, link).toBe(200);
    // The icon a browser asks for with every page: a plain 404, not the API's 406.
    expect((await request(`${srv.rest}/favicon.ico`, { headers: { accept: 'image/avif,image/webp,*/*' } })).status).toBe(404);
    for (const accept of [undefined, '*/*', ACCEPT, 'application/json, text/html']) {
      const other = await request(`${srv.rest}/`, accept === undefined ? {} : { headers: { accept } });
      expect(other.status, accept).toBe(404);
      expect(other.json.detail, accept).toMatch(/\/docs\/.*\/dashboard\//);
    }
  });
});

describe('sign-in', () => {
  it('refuses bad input, a wrong key and a request from another site', async () => {
    const good = { public_key: srv.keys.public_key, secret_key: srv.keys.secret_key };
    expect((await signIn('{nope')).status).toBe(400);
    expect((await signIn({ secret_key: 'x' })).status).toBe(400);
    expect((await signIn({ ...good, admin_token: ADMIN_TOKEN })).status).toBe(400);
    expect((await signIn({ public_key: ['a'], secret_key: 'x' })).status).toBe(400);
    const wrong = await signIn({ ...good, secret_key: `${srv.keys.secret_key}x` });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    expect((await signIn({ public_key: 'nosuchkey', secret_key: srv.keys.secret_key })).status).toBe(401);
    expect((await signIn(good, {})).status).toBe(403);
    expect((await signIn(good, { origin: 'https://evil.example' })).status).toBe(403);
  });

  it('sets an HttpOnly, SameSite=Strict, expiring cookie and never echoes the secret', async () => {
    const r = await signIn({ public_key: srv.keys.public_key, secret_key: srv.keys.secret_key });
    expect(r.status, r.text).toBe(200);
    expect(r.text).not.toContain(srv.keys.secret_key);
    const cookie = r.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^stowage_dashboard=[A-Za-z0-9_-]{43}; /);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).toContain('Path=/');
    expect(cookie).toMatch(/Max-Age=28800/);
    expect(cookie).not.toContain('Secure'); // plain HTTP on loopback; HTTPS adds it
    const pair = cookie.split(';')[0]!;
    const who = await request(`${srv.rest}/dashboard/api/session`, { headers: { cookie: pair, 'x-stowage-dashboard': '1' } });
    expect(who.json).toMatchObject({ signed_in: true, project: { pub_key: srv.keys.public_key }, upload_base: srv.upload, cdn_base: srv.cdn, widget: true });
    expect(who.text).not.toContain(srv.keys.secret_key);
    expect((await request(`${srv.rest}/dashboard/api/session`, { headers: { 'x-stowage-dashboard': '1' } })).json).toEqual({ signed_in: false });
  });

  it('"who am I" answers only the pages\' own calls: the cookie without the dashboard header is a 401', async () => {
    const cookie = await cookieFor({ public_key: srv.keys.public_key, secret_key: srv.keys.secret_key });
    const bare = await request(`${srv.rest}/dashboard/api/session`, { headers: { cookie } });
    expect(bare.status).toBe(401);
    expect(bare.text).not.toContain(srv.keys.public_key);
    expect((await request(`${srv.rest}/dashboard/api/session`)).status).toBe(401);
    expect((await request(`${srv.rest}/dashboard/api/session`, { headers: { cookie, 'x-stowage-dashboard': 'yes' } })).status).toBe(401);
  });
});

describe('the REST API through a session', () => {
  it('opens with the cookie and the dashboard header, and only then', async () => {
    const uuid = await srv.uploadFile('a.txt', 'hello');
    const cookie = await cookieFor({ public_key: srv.keys.public_key, secret_key: srv.keys.secret_key });
    const list = await viaSession(cookie, 'GET', '/files/');
    expect(list.status, list.text).toBe(200);
    expect(list.json.results.map((f: { uuid: string }) => f.uuid)).toContain(uuid);
    // Without the header (what a cross-site form could send), the cookie is not a credential.
    expect((await request(`${srv.rest}/files/`, { headers: { cookie, accept: ACCEPT } })).status).toBe(401);
    expect((await viaSession(cookie, 'GET', '/files/', { accept: 'text/html' })).status).toBe(406);
    expect((await viaSession('stowage_dashboard=not-a-token', 'GET', '/files/')).status).toBe(401);
    expect((await viaSession(`stowage_dashboard=${'A'.repeat(43)}`, 'GET', '/files/')).status).toBe(401);
  });

  it('accepts a write only from its own origin', async () => {
    const uuid = await srv.uploadFile('b.txt', 'hello');
    const cookie = await cookieFor({ public_key: srv.keys.public_key, secret_key: srv.keys.secret_key });
    const put = (headers: Record<string, string>) => viaSession(cookie, 'PUT', `/files/${uuid}/metadata/k/`, { 'content-type': 'application/json', ...headers }, '"v"');
    expect((await put({})).status).toBe(403);
    expect((await put({ origin: 'https://evil.example' })).status).toBe(403);
    expect((await put({ origin: 'null' })).status).toBe(403);
    expect((await srv.call('GET', `/files/${uuid}/metadata/`)).json).toEqual({});
    const ok = await put({ origin: origin() });
    expect(ok.status, ok.text).toBe(201);
    expect((await srv.call('GET', `/files/${uuid}/metadata/`)).json).toEqual({ k: 'v' });
  });

  it("usage: the project's files and bytes, stored, not stored and removed, for the pages' own calls only", async () => {
    await srv.uploadFile('usage-kept.txt', 'x'.repeat(1000));
    await srv.uploadFile('usage-later.txt', 'y'.repeat(300), { store: false });
    const gone = await srv.uploadFile('usage-gone.txt', 'z'.repeat(50));
    expect((await srv.call('DELETE', `/files/${gone}/storage/`)).status).toBe(200);
    const cookie = await cookieFor({ public_key: srv.keys.public_key, secret_key: srv.keys.secret_key });
    expect((await request(`${srv.rest}/dashboard/api/usage`, { headers: { cookie } })).status).toBe(401);
    const usage = await request(`${srv.rest}/dashboard/api/usage`, { headers: { cookie, 'x-stowage-dashboard': '1' } });
    expect(usage.status, usage.text).toBe(200);
    // What the REST API lists, summed here.
    const list = async (q: string) => ((await srv.call('GET', `/files/?limit=1000&${q}`)).json as { results: Array<{ size: number }> }).results;
    const [stored, unstored, removed] = await Promise.all([list('stored=true&removed=false'), list('stored=false&removed=false'), list('removed=true')]);
    const sum = (rows: Array<{ size: number }>) => rows.reduce((n, r) => n + r.size, 0);
    expect(usage.json).toEqual({ stored: { files: stored.length, bytes: sum(stored) }, unstored: { files: unstored.length, bytes: sum(unstored) }, removed: { files: removed.length } });
    expect(usage.json.unstored.bytes).toBeGreaterThanOrEqual(300);
  });

  it('ends at sign-out: the old cookie opens nothing', async () => {
    const cookie = await cookieFor({ public_key: srv.keys.public_key, secret_key: srv.keys.secret_key });
    expect((await request(`${srv.rest}/dashboard/api/logout`, { method: 'POST', headers: { cookie } })).status).toBe(403);
    const out = await request(`${srv.rest}/dashboard/api/logout`, { method: 'POST', headers: { cookie, origin: origin() } });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^stowage_dashboard=; .*Max-Age=0/);
    const after = await viaSession(cookie, 'GET', '/files/');
    expect(after.status).toBe(401);
    expect(after.json.detail).toMatch(/session ended/);
  });

  it('ends when the secret key it was opened with is revoked', async () => {
    const added = JSON.parse(srv.server.cli(['key', 'add', '--pub-key', srv.keys.public_key, '--json'])) as { id: number; secret_key: string };
    const cookie = await cookieFor({ public_key: srv.keys.public_key, secret_key: added.secret_key });
    expect((await viaSession(cookie, 'GET', '/files/')).status).toBe(200);
    srv.server.cli(['key', 'revoke', '--pub-key', srv.keys.public_key, '--id', String(added.id)]);
    // Revocations reach a node within its key cache's lifetime (2 s).
    await expect.poll(async () => (await viaSession(cookie, 'GET', '/files/')).status, { timeout: 15_000, interval: 500 }).toBe(401);
    // The suite's own key still signs in.
    expect((await signIn({ public_key: srv.keys.public_key, secret_key: srv.keys.secret_key })).status).toBe(200);
  });

  it('admin token: signs in to the named project, and sees only that project', async () => {
    expect((await signIn({ public_key: srv.keys.public_key, admin_token: `${ADMIN_TOKEN}x` })).status).toBe(401);
    const other = await srv.newProject();
    const cookie = await cookieFor({ public_key: other.keys.public_key, admin_token: ADMIN_TOKEN });
    const list = await viaSession(cookie, 'GET', '/files/');
    expect(list.status, list.text).toBe(200);
    expect(list.json.results).toEqual([]);
    const mine = await srv.uploadFile('c.txt', 'hello');
    expect((await viaSession(cookie, 'GET', `/files/${mine}/`)).status).toBe(404);
  });
});
