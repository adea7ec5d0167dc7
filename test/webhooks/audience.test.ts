/**
 * A change writes the deliveries of its file events itself, in its transaction, and only when a
 * subscription can receive them (jobs/event-outbox.ts, webhooks/event-deliveries.ts): a project
 * without webhooks pays no job per upload, one that subscribes hears the next event, and no
 * `event.file` job stands between a change and its deliveries. The jobs table is read from the
 * store itself: the subject is what each change writes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { storeRows, storeWrite } from '../helpers/store-query.js';
import { startReceiver, type Receiver } from './receiver.js';

const srv = useServer({ env: { STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8' } });
let hooks: Receiver;

const form = (fields: Record<string, string>) => ({ body: new URLSearchParams(fields).toString(), contentType: 'application/x-www-form-urlencoded' });

interface JobRow {
  id: number | string;
  kind: string;
  payload: string;
}

/** The jobs written for one file's events (file events or deliveries). */
const jobsOf = (uuid: string) => storeRows<JobRow>(srv.server, "SELECT id, kind, payload FROM jobs WHERE kind IN ('event.file', 'webhook.deliver') AND payload LIKE ?", [`%${uuid}%`]);

/** The file events written for one file, by name, with the kind of job that carries each. */
async function eventsOf(uuid: string): Promise<string[]> {
  return (await jobsOf(uuid)).map((r) => `${r.kind} ${(JSON.parse(r.payload) as { event: string }).event}`).sort();
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
    // Stored at upload, but no one subscribed to file.stored: that event was not written. The
    // delivery was written by the upload itself, no event.file job before it.
    expect(await eventsOf(uuid)).toEqual(['webhook.deliver file.uploaded']);
    const [job] = await jobsOf(uuid);
    const payload = JSON.parse(job?.payload ?? '{}') as { body: string; eventUs: number; eventId?: number };
    // The body as frozen in the job is the one delivered, the file as the upload stored it.
    expect(payload.body).toBe(hit?.body);
    expect(JSON.parse(payload.body).data).toMatchObject({ uuid, is_stored: true, original_filename: 'heard.txt' });
    expect(payload.eventId).toBeUndefined();
    // Its attempt is recorded (with the job's outcome, just after the answer) under the delivery job's own id.
    const eventIds = async () => ((await srv.call('GET', `/webhooks/${sub.json.id}/deliveries/`)).json.results as { event_id: number }[]).map((r) => r.event_id);
    await expect.poll(eventIds, { timeout: 10_000 }).toEqual([Number(job?.id)]);

    // A subscription turned off is no audience either.
    expect((await srv.call('PUT', `/webhooks/${sub.json.id}/`, form({ is_active: 'false' }))).status).toBe(200);
    const after = await srv.uploadFile('quiet-again.txt', 'no one listens again');
    expect(await eventsOf(after)).toEqual([]);
  });

  it('an event.file job written by a node without the webhooks feature (the CLI) is still fanned out, once per subscription', async () => {
    const sub = await srv.call('POST', '/webhooks/', form({ target_url: hooks.url, event: 'file.stored' }));
    expect(sub.status).toBe(201);
    const uuid = await srv.uploadFile('from-cli.txt', 'stored by another node', { store: false });
    const [file] = await storeRows<{ project_id: number | string }>(srv.server, 'SELECT project_id FROM files WHERE uuid = ?', [uuid]);
    const event = { projectId: Number(file?.project_id), event: 'file.stored', uuid, initiator: { type: 'system', detail: { request_id: null, addon_name: null, source_file_uuid: null } } };
    const now = Date.now() * 1000;
    await storeWrite(srv.server, 'INSERT INTO jobs (kind, payload, run_at_us, max_attempts, created_us) VALUES (?, ?, ?, ?, ?)', ['event.file', JSON.stringify(event), now, 20, now]);
    const [hit] = await hooks.waitFor(1, 20_000, (r) => r.json?.data?.uuid === uuid);
    expect(hit?.json?.hook?.id).toBe(sub.json.id);
    const [eventJob] = (await jobsOf(uuid)).filter((j) => j.kind === 'event.file');
    const deliveries = (await jobsOf(uuid)).filter((j) => j.kind === 'webhook.deliver');
    expect(deliveries).toHaveLength(1);
    // The fan-out's delivery ties its attempts to the event.file job.
    expect((JSON.parse(deliveries[0]?.payload ?? '{}') as { eventId?: number }).eventId).toBe(Number(eventJob?.id));
  });
});