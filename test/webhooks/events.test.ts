/**
 * Every event from every path that emits it, delivered to a real receiver, signed, with the
 * wire-reference §4 payload; inactive subscriptions and other projects get nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { restClient, uploadBase } from '../helpers/rest.js';
import { sleep, startReceiver, validSignature, type Received, type Receiver } from './receiver.js';

const SECRET = 'Sh4red-s3cret';
const EVENTS = ['file.uploaded', 'file.stored', 'file.deleted', 'file.info_updated'] as const;

let hooks: Receiver;
let inactive: Receiver;
let foreign: Receiver;
const subIds: Record<string, number> = {};

const form = (fields: Record<string, string>) => ({ body: new URLSearchParams(fields).toString(), contentType: 'application/x-www-form-urlencoded' });

async function upload(store: '0' | '1', name = 'note.txt'): Promise<string> {
  const r = await uploadBase(srv.upload, srv.keys.public_key, [{ name, data: `hello ${Math.random()}` }], { UPLOADCARE_STORE: store });
  expect(r.status).toBe(200);
  return r.json.file as string;
}

const about = (event: string, uuid: string) => (r: Received) => r.json?.hook?.event === event && r.json?.data?.uuid === uuid;

async function one(event: string, uuid: string): Promise<Received> {
  const [hit] = await hooks.waitFor(1, 20_000, about(event, uuid));
  return hit!;
}

beforeAll(async () => {
  [hooks, inactive, foreign] = await Promise.all([startReceiver(), startReceiver(), startReceiver()]);
});
const srv = useServer({ env: { STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8' } });
beforeAll(async () => {
  for (const event of EVENTS) {
    const r = await srv.call('POST', '/webhooks/', form({ target_url: hooks.url, event, signing_secret: SECRET }));
    expect(r.status).toBe(201);
    subIds[event] = r.json.id;
    const off = await srv.call('POST', '/webhooks/', form({ target_url: inactive.url, event, is_active: 'false' }));
    expect(off.status).toBe(201);
  }
  // A second project subscribed to everything: it must hear nothing about this project's files.
  const otherCall = restClient(srv.rest, await srv.server.createProject());
  for (const event of EVENTS) await otherCall('POST', '/webhooks/', form({ target_url: foreign.url, event }));
});
afterAll(async () => {
  await Promise.all([hooks?.close(), inactive?.close(), foreign?.close()]);
});

describe('payload and signature', () => {
  it('file.uploaded carries hook, data, file and initiator, signed with the spec formula', async () => {
    const uuid = await upload('0', 'Report 2024.txt');
    const hit = await one('file.uploaded', uuid);
    expect(hit.method).toBe('POST');
    expect(hit.headers['content-type']).toBe('application/json');
    expect(validSignature(SECRET, hit.body, hit.headers['x-uc-signature'])).toBe(true);
    expect(validSignature(SECRET + 'x', hit.body, hit.headers['x-uc-signature'])).toBe(false);
    const p = hit.json;
    expect(Object.keys(p)).toEqual(['initiator', 'hook', 'data', 'file']);
    expect(p.initiator).toMatchObject({ type: 'api', detail: { addon_name: null, source_file_uuid: null } });
    expect(Object.keys(p.hook)).toEqual(['id', 'project_id', 'project_pub_key', 'target', 'event', 'is_active', 'version', 'created_at', 'updated_at']);
    expect(p.hook).toMatchObject({ id: subIds['file.uploaded'], project_pub_key: srv.keys.public_key, target: hooks.url, event: 'file.uploaded', is_active: true, version: '0.7' });
    expect(JSON.stringify(p)).not.toContain(SECRET);
    expect(p.file).toBe(`${srv.cdn}/${uuid}/Report2024.txt`);
    // data: the REST file object (with appdata) plus the upload-info fields
    const rest = (await srv.call('GET', `/files/${uuid}/?include=appdata`)).json;
    for (const [k, v] of Object.entries(rest)) expect(p.data[k], k).toEqual(v);
    expect(p.data).toMatchObject({ file_id: uuid, filename: 'Report2024.txt', is_stored: false, total: rest.size, done: rest.size, image_info: null });
  });

  it('the attempt is recorded at GET /webhooks/{id}/deliveries/', async () => {
    const uuid = await upload('0');
    await one('file.uploaded', uuid);
    let rec: Record<string, unknown> | undefined;
    for (let i = 0; i < 50 && !rec; i++) {
      const res = await srv.call('GET', `/webhooks/${subIds['file.uploaded']}/deliveries/?limit=5`);
      expect(res.status).toBe(200);
      rec = res.json.results.find((r: { success: boolean }) => r.success);
      if (!rec) await sleep(100);
    }
    expect(rec).toMatchObject({ webhook: subIds['file.uploaded'], event: 'file.uploaded', attempt: 1, status: 200, success: true, error: null, response_excerpt: 'ok', target_url: hooks.url });
    expect((await srv.call('GET', '/webhooks/999999/deliveries/')).status).toBe(404);
  });
});

describe('each path that emits an event', () => {
  it('upload with store=1 emits file.uploaded and file.stored', async () => {
    const uuid = await upload('1');
    await one('file.uploaded', uuid);
    const stored = await one('file.stored', uuid);
    expect(stored.json.data.is_stored).toBe(true);
    expect(stored.json.data.datetime_stored).not.toBeNull();
  });

  it('REST store emits file.stored', async () => {
    const uuid = await upload('0');
    await one('file.uploaded', uuid);
    expect((await srv.call('PUT', `/files/${uuid}/storage/`)).status).toBe(200);
    const hit = await one('file.stored', uuid);
    expect(hit.json.initiator.type).toBe('api');
  });

  it('batch store emits file.stored for each file it stores (an already stored one, or a repeat, is no second event)', async () => {
    const a = await upload('0');
    const b = await upload('0');
    const c = await upload('1');
    await one('file.stored', c);
    const r = await srv.call('PUT', '/files/storage/', { body: JSON.stringify([a, b, c, a]) });
    expect(r.status).toBe(200);
    expect(r.json.result.map((f: { uuid: string }) => f.uuid)).toEqual([a, b, c]);
    await one('file.stored', a);
    await one('file.stored', b);
    // "who receives" below counts every delivery: c's and a's file.stored arrive once each.
  });

  it('REST delete emits file.deleted', async () => {
    const uuid = await upload('1');
    expect((await srv.call('DELETE', `/files/${uuid}/storage/`)).status).toBe(200);
    const hit = await one('file.deleted', uuid);
    expect(hit.json.data.datetime_removed).not.toBeNull();
  });

  it('batch delete emits file.deleted for each file', async () => {
    const a = await upload('0');
    const b = await upload('1');
    const r = await srv.call('DELETE', '/files/storage/', { body: JSON.stringify([a, b]) });
    expect(r.status).toBe(200);
    await one('file.deleted', a);
    await one('file.deleted', b);
  });

  it('metadata PUT (add, change) and DELETE emit file.info_updated with previous_values', async () => {
    const uuid = await upload('1');
    expect((await srv.call('PUT', `/files/${uuid}/metadata/colour/`, { body: JSON.stringify('red') })).status).toBe(201);
    const added = await one('file.info_updated', uuid);
    expect(added.json.previous_values).toEqual({ metadata: { colour: null } });
    expect(added.json.data.metadata).toEqual({ colour: 'red' });

    expect((await srv.call('PUT', `/files/${uuid}/metadata/colour/`, { body: JSON.stringify('blue') })).status).toBe(200);
    const changed = (await hooks.waitFor(2, 20_000, about('file.info_updated', uuid)))[1]!;
    expect(changed.json.previous_values).toEqual({ metadata: { colour: 'red' } });

    expect((await srv.call('DELETE', `/files/${uuid}/metadata/colour/`)).status).toBe(204);
    const removed = (await hooks.waitFor(3, 20_000, about('file.info_updated', uuid)))[2]!;
    expect(removed.json.previous_values).toEqual({ metadata: { colour: 'blue' } });
    for (const hit of [added, changed, removed]) expect(validSignature(SECRET, hit.body, hit.headers['x-uc-signature'])).toBe(true);
  });
});

describe('who receives', () => {
  it('each event reached the active subscription exactly once, inactive ones and other projects nothing', async () => {
    // Grace period for any stray delivery still in the queue to show up before counting.
    await sleep(2000);
    const seen = new Map<string, number>();
    for (const r of hooks.received) {
      const key = `${r.json.hook.event}:${r.json.data.uuid}:${r.body.length}:${r.json.previous_values ? JSON.stringify(r.json.previous_values) : ''}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    expect(hooks.received.length).toBeGreaterThan(10);
    expect(inactive.received).toEqual([]);
    expect(foreign.received).toEqual([]);
  });

  it('a subscription paused after the event gets nothing; re-activated it hears new events', async () => {
    const hookId = subIds['file.uploaded'];
    expect((await srv.call('PUT', `/webhooks/${hookId}/`, { body: JSON.stringify({ is_active: false }) })).json.is_active).toBe(false);
    const quiet = await upload('0');
    await sleep(1500);
    expect(hooks.received.filter(about('file.uploaded', quiet))).toEqual([]);
    expect((await srv.call('PUT', `/webhooks/${hookId}/`, { body: JSON.stringify({ is_active: true }) })).json.is_active).toBe(true);
    const loud = await upload('0');
    await one('file.uploaded', loud);
  });
});
