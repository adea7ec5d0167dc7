/** Subscription management over real HTTP: shapes, both body encodings, validation and 404s. */
import { beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { restClient } from '../helpers/rest.js';

const srv = useServer();
let call: ReturnType<typeof restClient>;
let other: ReturnType<typeof restClient>;

const form = (fields: Record<string, string>) => ({ body: new URLSearchParams(fields).toString(), contentType: 'application/x-www-form-urlencoded' });
const json = (value: unknown) => ({ body: JSON.stringify(value), contentType: 'application/json' });
const KEYS = ['id', 'created', 'updated', 'event', 'target_url', 'project', 'is_active', 'signing_secret', 'version'];
const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

beforeAll(async () => {
  call = restClient(srv.rest, await srv.server.createProject());
  other = restClient(srv.rest, await srv.server.createProject());
});

describe('POST /webhooks/', () => {
  it('creates from a form body with the exact subscription shape', async () => {
    const res = await call('POST', '/webhooks/', form({ target_url: 'https://example.com/a', event: 'file.uploaded', is_active: 'True' }));
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(Object.keys(res.json)).toEqual(KEYS);
    expect(res.json).toMatchObject({ event: 'file.uploaded', target_url: 'https://example.com/a', is_active: true, signing_secret: null, version: '0.7' });
    expect(typeof res.json.id).toBe('number');
    expect(typeof res.json.project).toBe('number');
    expect(res.json.created).toMatch(TS);
    expect(res.json.updated).toMatch(TS);
  });

  it('creates from JSON with a real boolean, a secret and a version', async () => {
    const res = await call('POST', '/webhooks/', json({ target_url: 'https://example.com/b', event: 'file.stored', is_active: false, signing_secret: 's3cr3t', version: '0.7' }));
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ event: 'file.stored', is_active: false, signing_secret: 's3cr3t', version: '0.7' });
  });

  it.each([
    ['1', true],
    ['true', true],
    ['True', true],
    ['0', false],
    ['false', false],
    ['False', false],
  ])('accepts is_active=%s', async (value, expected) => {
    const res = await call('POST', '/webhooks/', form({ target_url: `https://example.com/bool-${value}`, event: 'file.deleted', is_active: value }));
    expect(res.status).toBe(201);
    expect(res.json.is_active).toBe(expected);
  });

  it('defaults is_active to true', async () => {
    const res = await call('POST', '/webhooks/', form({ target_url: 'https://example.com/default', event: 'file.info_updated' }));
    expect(res.json.is_active).toBe(true);
  });

  it('answers the documented bodies for bad input', async () => {
    const missing = await call('POST', '/webhooks/', form({ event: 'file.uploaded' }));
    expect(missing.status).toBe(400);
    expect(missing.json).toEqual({ detail: '`target_url` is missing.' });
    const noEvent = await call('POST', '/webhooks/', form({ target_url: 'https://example.com/x' }));
    expect(noEvent.status).toBe(400);
    expect(noEvent.json).toEqual({ detail: '`event` is missing.' });
    const badEvent = await call('POST', '/webhooks/', form({ target_url: 'https://example.com/x', event: 'file.exploded' }));
    expect(badEvent.status).toBe(400);
    expect(badEvent.json).toEqual({ event: ['"file.exploded" is not a valid choice.'] });
    const badBool = await call('POST', '/webhooks/', form({ target_url: 'https://example.com/x', event: 'file.uploaded', is_active: 'yes' }));
    expect(badBool.status).toBe(400);
    expect(badBool.json).toEqual({ is_active: ['Must be a valid boolean.'] });
    const badVersion = await call('POST', '/webhooks/', json({ target_url: 'https://example.com/x', event: 'file.uploaded', version: '0.5' }));
    expect(badVersion.status).toBe(400);
    expect(Object.keys(badVersion.json)).toEqual(['version']);
  });

  it('refuses non-http(s) and over-long target URLs, and over-long secrets', async () => {
    for (const url of ['ftp://example.com/x', 'javascript:alert(1)', 'not a url', `https://example.com/${'a'.repeat(240)}`]) {
      const res = await call('POST', '/webhooks/', form({ target_url: url, event: 'file.uploaded' }));
      expect(res.status, url).toBe(400);
      expect(Object.keys(res.json), url).toEqual(['target_url']);
    }
    const longSecret = await call('POST', '/webhooks/', form({ target_url: 'https://example.com/s', event: 'file.uploaded', signing_secret: 'x'.repeat(33) }));
    expect(longSecret.status).toBe(400);
    expect(longSecret.json).toEqual({ signing_secret: ['Ensure this field has no more than 32 characters.'] });
    const maxSecret = await call('POST', '/webhooks/', form({ target_url: 'https://example.com/s', event: 'file.uploaded', signing_secret: 'x'.repeat(32) }));
    expect(maxSecret.status).toBe(201);
  });

  it('refuses control characters (NUL, which PostgreSQL text cannot hold, and the others) as field errors', async () => {
    for (const url of ['https://example.com/a\u0000b', 'https://example.com/\u0001', 'https://exam\u007fple.com/']) {
      const res = await call('POST', '/webhooks/', json({ target_url: url, event: 'file.uploaded' }));
      expect(res.status, JSON.stringify(url)).toBe(400);
      expect(res.json, JSON.stringify(url)).toEqual({ target_url: ['Enter a valid URL.'] });
    }
    for (const secret of ['a\u0000b', 'tab\tsecret']) {
      const res = await call('POST', '/webhooks/', form({ target_url: 'https://example.com/nul', event: 'file.uploaded', signing_secret: secret }));
      expect(res.status, JSON.stringify(secret)).toBe(400);
      expect(res.json).toEqual({ signing_secret: ['Control characters are not allowed.'] });
    }
    const created = await call('POST', '/webhooks/', json({ target_url: 'https://example.com/nul-update', event: 'file.uploaded' }));
    const update = await call('PUT', `/webhooks/${created.json.id}/`, json({ signing_secret: '\u0000', target_url: 'https://example.com/\u0000' }));
    expect(update.status).toBe(400);
    expect(Object.keys(update.json).sort()).toEqual(['signing_secret', 'target_url']);
  });

  it('keeps target_url unique per project and event', async () => {
    const first = await call('POST', '/webhooks/', form({ target_url: 'https://example.com/dup', event: 'file.uploaded' }));
    expect(first.status).toBe(201);
    const dup = await call('POST', '/webhooks/', form({ target_url: 'https://example.com/dup', event: 'file.uploaded' }));
    expect(dup.status).toBe(400);
    expect(dup.json).toEqual({ non_field_errors: ['This project is already subscribed on this event'] });
    const otherEvent = await call('POST', '/webhooks/', form({ target_url: 'https://example.com/dup', event: 'file.stored' }));
    expect(otherEvent.status).toBe(201);
    const otherProject = await other('POST', '/webhooks/', form({ target_url: 'https://example.com/dup', event: 'file.uploaded' }));
    expect(otherProject.status).toBe(201);
  });
});

describe('GET, PUT, POST {id}, DELETE', () => {
  it('lists only the project’s own subscriptions', async () => {
    const mine = await call('GET', '/webhooks/');
    const theirs = await other('GET', '/webhooks/');
    expect(mine.status).toBe(200);
    expect(Array.isArray(mine.json)).toBe(true);
    for (const s of mine.json) expect(Object.keys(s)).toEqual(KEYS);
    const mineIds = new Set(mine.json.map((s: { id: number }) => s.id));
    expect(theirs.json.length).toBe(1);
    expect(mineIds.has(theirs.json[0].id)).toBe(false);
  });

  it('updates only the fields given (PUT, JSON) and the older POST form', async () => {
    const created = await call('POST', '/webhooks/', form({ target_url: 'https://example.com/upd', event: 'file.uploaded', signing_secret: 'keep' }));
    const id = created.json.id;
    const put = await call('PUT', `/webhooks/${id}/`, json({ is_active: false }));
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ id, is_active: false, target_url: 'https://example.com/upd', event: 'file.uploaded', signing_secret: 'keep' });
    expect(put.json.created).toBe(created.json.created);
    const post = await call('POST', `/webhooks/${id}/`, form({ target_url: 'https://example.com/upd2', is_active: '1' }));
    expect(post.status).toBe(200);
    expect(post.json).toMatchObject({ id, is_active: true, target_url: 'https://example.com/upd2', signing_secret: 'keep' });
    const cleared = await call('PUT', `/webhooks/${id}/`, json({ signing_secret: null }));
    expect(cleared.json.signing_secret).toBeNull();
    const listed = (await call('GET', '/webhooks/')).json.find((s: { id: number }) => s.id === id);
    expect(listed).toEqual(cleared.json);
  });

  it('answers 404 for an unknown or foreign id, and 400 for a clash on update', async () => {
    const unknown = await call('PUT', '/webhooks/999999/', json({ is_active: false }));
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({ detail: 'Not found.' });
    expect((await call('PUT', '/webhooks/abc/', json({}))).status).toBe(404);
    const foreign = (await other('GET', '/webhooks/')).json[0].id;
    expect((await call('PUT', `/webhooks/${foreign}/`, json({ is_active: false }))).status).toBe(404);
    expect((await call('DELETE', `/webhooks/${foreign}/`)).status).toBe(404);
    const a = await call('POST', '/webhooks/', form({ target_url: 'https://example.com/clash-a', event: 'file.uploaded' }));
    await call('POST', '/webhooks/', form({ target_url: 'https://example.com/clash-b', event: 'file.uploaded' }));
    const clash = await call('PUT', `/webhooks/${a.json.id}/`, json({ target_url: 'https://example.com/clash-b' }));
    expect(clash.status).toBe(400);
    expect(clash.json).toEqual({ non_field_errors: ['This project is already subscribed on this event'] });
  });

  it('deletes by id (204) and the id is gone afterwards', async () => {
    const created = await call('POST', '/webhooks/', form({ target_url: 'https://example.com/del', event: 'file.uploaded' }));
    const del = await call('DELETE', `/webhooks/${created.json.id}/`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await call('DELETE', `/webhooks/${created.json.id}/`)).status).toBe(404);
    const ids = (await call('GET', '/webhooks/')).json.map((s: { id: number }) => s.id);
    expect(ids).not.toContain(created.json.id);
  });
});

describe('unsubscribe', () => {
  it('POST form with target_url and event removes that one subscription', async () => {
    await call('POST', '/webhooks/', form({ target_url: 'https://example.com/u1', event: 'file.uploaded' }));
    await call('POST', '/webhooks/', form({ target_url: 'https://example.com/u1', event: 'file.stored' }));
    const res = await call('POST', '/webhooks/unsubscribe/', form({ target_url: 'https://example.com/u1', event: 'file.uploaded' }));
    expect(res.status).toBe(204);
    const left = (await call('GET', '/webhooks/')).json.filter((s: { target_url: string }) => s.target_url === 'https://example.com/u1');
    expect(left.map((s: { event: string }) => s.event)).toEqual(['file.stored']);
  });

  it('DELETE with JSON target_url only removes every event of that target', async () => {
    await call('POST', '/webhooks/', form({ target_url: 'https://example.com/u2', event: 'file.uploaded' }));
    await call('POST', '/webhooks/', form({ target_url: 'https://example.com/u2', event: 'file.deleted' }));
    const res = await call('DELETE', '/webhooks/unsubscribe/', json({ target_url: 'https://example.com/u2' }));
    expect(res.status).toBe(204);
    const left = (await call('GET', '/webhooks/')).json.filter((s: { target_url: string }) => s.target_url === 'https://example.com/u2');
    expect(left).toEqual([]);
  });

  it('requires target_url', async () => {
    const res = await call('POST', '/webhooks/unsubscribe/', form({ event: 'file.uploaded' }));
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ detail: '`target_url` is missing.' });
  });
});
