/**
 * Signed CDN URLs (docs/cdn-signed-urls.md): a project with signed CDN on answers 403 without a
 * valid token; tokens minted by the REST helper, the CLI, and independently here with the
 * hosted service's algorithm (wire-reference §3.5) from the key `stowage project cdn-key` prints.
 */
import crypto from 'node:crypto';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, type ProjectKeys, type TestServer } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { restClient } from '../helpers/rest.js';
import { get, put } from './helpers.js';
import { makeGroup, png } from '../groups/helpers.js';

const suite = useServer();
let server: TestServer;
let keys: ProjectKeys;
let cdnKey: string;
let uuid: string;
let other: string;
beforeAll(async () => {
  server = suite.server;
  keys = suite.keys;
  // Switched on before the server ever asks about this project: no cache to wait for.
  expect(await cli(['project', 'set', '--pub-key', keys.public_key, '--signed-cdn', 'on'])).toMatch(/signed CDN on/);
  cdnKey = (await cli(['project', 'cdn-key', '--pub-key', keys.public_key])).trim();
  uuid = await put(server, keys, 'photo.png', await png(40, 20));
  other = await put(server, keys, 'other.png', await png(8, 8, [0, 0, 200]));
}, 180_000);

/** The CLI without blocking this process (a blocked test process lets the server close idle sockets under fetch). */
async function cli(args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(ROOT, 'bin', 'stowage.js'), ...args], { env: server.env, encoding: 'utf8' });
  return stdout;
}

/** The builders' algorithm, written from wire-reference §3.5, not from the server's code. */
function akamaiToken(key: string, exp: number, acl: string): string {
  const hmac = crypto.createHmac('sha256', Buffer.from(key, 'hex')).update(`exp=${exp}~acl=${acl}`).digest('hex');
  return `exp=${exp}~acl=${acl}~hmac=${hmac}`;
}
const inFive = () => Math.floor(Date.now() / 1000) + 300;

async function mint(body: Record<string, unknown>) {
  const r = await restClient(server.rest, keys)('POST', '/project/cdn_tokens/', { body: JSON.stringify(body) });
  expect(r.status, r.text).toBe(200);
  return r.json as { token: string; acl: string | null; expire: number; url: string };
}

describe('signed CDN URLs', () => {
  it('answer 403 without a token, and the file with a token for its path, with or without a filename', async () => {
    const bare = await get(server, `/${uuid}/`);
    expect(bare.status).toBe(403);
    expect(bare.text).toMatch(/signed URL/);
    const t = akamaiToken(cdnKey, inFive(), `/${uuid}/`);
    const ok = await get(server, `/${uuid}/?token=${t}`);
    expect(ok.status).toBe(200);
    expect((await sharp(ok.body).metadata()).width).toBe(40);
    expect((await get(server, `/${uuid}/photo.png?token=${t}`)).status).toBe(200);
    // The same grant does not open operations (another path) nor another file.
    expect((await get(server, `/${uuid}/-/resize/10x/?token=${t}`)).status).toBe(403);
    const wrongFile = await get(server, `/${other}/?token=${t}`);
    expect(wrongFile.status).toBe(403);
    expect(wrongFile.text).toMatch(/does not grant this path/);
  });

  it('refuse expired, forged and malformed tokens', async () => {
    const past = Math.floor(Date.now() / 1000) - 5;
    const expired = await get(server, `/${uuid}/?token=${akamaiToken(cdnKey, past, `/${uuid}/`)}`);
    expect(expired.status).toBe(403);
    expect(expired.text).toMatch(/expired/);
    const good = akamaiToken(cdnKey, inFive(), `/${uuid}/`);
    const flipped = good.slice(0, -1) + (good.endsWith('0') ? '1' : '0');
    expect((await get(server, `/${uuid}/?token=${flipped}`)).text).toMatch(/signature is invalid/);
    // A longer lifetime under the old signature, and a token signed with another key.
    expect((await get(server, `/${uuid}/?token=${good.replace(/exp=\d+/, `exp=${inFive() + 1000}`)}`)).status).toBe(403);
    expect((await get(server, `/${uuid}/?token=${akamaiToken('ab'.repeat(32), inFive(), `/${uuid}/`)}`)).status).toBe(403);
    for (const junk of ['x', 'exp=1~hmac=zz', 'acl=/a/~hmac=' + '0'.repeat(64), `exp=${inFive()}~acl=/${uuid}/`]) {
      expect((await get(server, `/${uuid}/?token=${encodeURIComponent(junk)}`)).status).toBe(403);
    }
  });

  it('grant operations through a wildcard token minted by the REST helper; the token is not part of the cache key', async () => {
    const minted = await mint({ path: uuid, wildcard: true, expire_in: 600 });
    expect(minted.acl).toBe(`/${uuid}/*`);
    expect(minted.url).toBe(`${server.cdn}/${uuid}/?token=${minted.token}`);
    const first = await get(server, `/${uuid}/-/resize/10x/?token=${minted.token}`);
    expect(first.status).toBe(200);
    expect((await sharp(first.body).metadata()).width).toBe(10);
    // A second valid token for the same rendition is served from the cache the first one filled.
    const second = await get(server, `/${uuid}/-/resize/10x/?token=${akamaiToken(cdnKey, inFive(), `/${uuid}/*`)}`);
    expect(second.status).toBe(200);
    expect(second.headers.get('x-stowage-cache')).toBe('hit');
    expect(second.body.equals(first.body)).toBe(true);
    // The exact-path grant of a path with operations.
    const exact = await mint({ path: `/${uuid}/-/resize/20x/` });
    expect(exact.acl).toBe(`/${uuid}/-/resize/20x/`);
    expect((await get(server, `/${uuid}/-/resize/20x/?token=${exact.token}`)).status).toBe(200);
    expect((await get(server, `/${uuid}/-/resize/21x/?token=${exact.token}`)).status).toBe(403);
  });

  it('accept exact-URL tokens (no acl) for the public URL only', async () => {
    const minted = await mint({ path: `${server.cdn}/${uuid}/`, exact_url: true });
    expect(minted.acl).toBeNull();
    expect(minted.token).not.toMatch(/acl=/);
    expect((await fetch(minted.url)).status).toBe(200);
    expect((await get(server, `/${uuid}/-/resize/10x/?token=${minted.token}`)).status).toBe(403);
  });

  it('mint URLs from the CLI', async () => {
    const url = (await cli(['project', 'cdn-token', '--pub-key', keys.public_key, '--path', `${uuid}/-/preview/`, '--cdn-base', server.cdn])).trim();
    expect(url).toMatch(new RegExp(`^${server.cdn}/${uuid}/-/preview/\\?token=exp=\\d+~acl=/${uuid}/-/preview/~hmac=[0-9a-f]{64}$`));
    expect((await fetch(url)).status).toBe(200);
  }, 120_000);

  it('protect groups: page, nth and archive; `~` travels as %7e in the acl', async () => {
    const gid = await makeGroup(server, keys, [uuid, other]);
    expect((await get(server, `/${gid}/`)).status).toBe(403);
    expect((await get(server, `/${gid}/nth/1/`)).status).toBe(403);
    const t = akamaiToken(cdnKey, inFive(), `/${gid.replace('~', '%7e')}/*`);
    expect((await get(server, `/${gid}/?token=${t}`)).status).toBe(200);
    const nth = await get(server, `/${gid}/nth/1/-/resize/4x/?token=${t}`);
    expect(nth.status).toBe(200);
    expect((await sharp(nth.body).metadata()).width).toBe(4);
    expect((await get(server, `/${gid}/archive/zip/?token=${t}`)).status).toBe(200);
    const minted = await mint({ path: `/${gid}/nth/0/` });
    expect(minted.acl).toBe(`/${gid.replace('~', '%7e')}/nth/0/`);
    expect((await get(server, `/${gid}/nth/0/?token=${minted.token}`)).status).toBe(200);
    expect((await get(server, `/${gid}/nth/1/?token=${minted.token}`)).status).toBe(403);
  });

  it('leave projects without signing public, and validate the REST helper input', async () => {
    const open = JSON.parse(await cli(['project', 'create', '--name', 'open', '--json'])) as ProjectKeys;
    const id = await put(server, open, 'a.png', await png(4, 4));
    expect((await get(server, `/${id}/`)).status).toBe(200);
    const call = restClient(server.rest, keys);
    expect((await call('POST', '/project/cdn_tokens/', { body: JSON.stringify({}) })).json.detail).toMatch(/`path` is required/);
    expect((await call('POST', '/project/cdn_tokens/', { body: JSON.stringify({ path: 'not-a-uuid' }) })).status).toBe(400);
    expect((await call('POST', '/project/cdn_tokens/', { body: JSON.stringify({ path: uuid, expire_in: 0 }) })).json.detail).toMatch(/expire_in/);
    expect((await call('POST', '/project/cdn_tokens/', { body: JSON.stringify({ path: uuid, wildcard: 'maybe' }) })).json.detail).toMatch(/wildcard/);
  }, 120_000);

  it('a rotated key replaces the old one and stays when signing is switched off', async () => {
    const p = JSON.parse(await cli(['project', 'create', '--name', 'rotating', '--json', '--autostore', 'on'])) as ProjectKeys;
    const rotated = (await cli(['project', 'cdn-key', '--pub-key', p.public_key, '--rotate'])).trim();
    expect(rotated).toMatch(/^[0-9a-f]{64}$/);
    expect(rotated).not.toBe(cdnKey);
    expect(await cli(['project', 'set', '--pub-key', p.public_key, '--signed-cdn', 'off'])).toMatch(/signed CDN off/);
    expect((await cli(['project', 'cdn-key', '--pub-key', p.public_key])).trim()).toBe(rotated);
  }, 180_000);
});
