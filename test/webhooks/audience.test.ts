/**
 * File events are written only when a subscription can receive them (jobs/event-outbox.ts): a
 * project without webhooks pays no job per upload, and one that subscribes hears the next event.
 * The jobs table is read from the store itself: the subject is what each change writes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { storeRows } from '../helpers/store-query.js';
import { startReceiver, type Receiver } from './receiver.js';

const srv = useServer({ env: { STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8' } });
let hooks: Receiver;

const form = (fields: Record<string, string>) => ({ body: new URLSearchParams(fields).toString(), contentType: 'application/x-www-form-urlencoded' });

/** The file events written for one file, by name. */
async function eventsOf(uuid: string): Promise<string[]> {
  const rows = await storeRows<{ payload: string }>(srv.server, "SELECT payload FROM jobs WHERE kind = 'event.file' AND payload LIKE ?", [`%${uuid}%`]);
  return rows.map((r) => (JSON.parse(r.payload) as { event: string }).event).sort();
}

beforeAll(async () => {
  hooks = await startReceiver();
});
afterAll(async () => {
  await hooks?.close();
});

describe('file events without and with an audience', () => {
  it('a project with no subscription writes no event for uploads, stores, metadata or deletes', async () => {
    const uuid = await srv.uploadFile('quiet.txt', 'no one listens', { store: false });
    expect((await srv.call('PUT', `/files/${uuid}/storage/`)).status).toBe(200);
    expect((await srv.call('PUT', `/files/${uuid}/metadata/k/`, { body: JSON.stringify('v') })).status).toBe(201);
    expect((await srv.call('DELETE', `/files/${uuid}/storage/`)).status).toBe(200);
    expect(await eventsOf(uuid)).toEqual([]);
  });

  it('after a subscription to file.uploaded, the next upload writes that event only and it is delivered', async () => {
    const sub = await srv.call('POST', '/webhooks/', form({ target_url: hooks.url, event: 'file.uploaded' }));
    expect(sub.status).toBe(201);
    const uuid = await srv.uploadFile('heard.txt', 'someone listens');
    const [hit] = await hooks.waitFor(1, 20_000, (r) => r.json?.data?.uuid === uuid);
    expect(hit?.json?.hook?.event).toBe('file.uploaded');
    // Stored at upload, but no one subscribed to file.stored: that event was not written.
    expect(await eventsOf(uuid)).toEqual(['file.uploaded']);

    // A subscription turned off is no audience either.
    expect((await srv.call('PUT', `/webhooks/${sub.json.id}/`, form({ is_active: 'false' }))).status).toBe(200);
    const after = await srv.uploadFile('quiet-again.txt', 'no one listens again');
    expect(await eventsOf(after)).toEqual([]);
  });
});
