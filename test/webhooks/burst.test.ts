/**
 * A burst over real HTTP: 300 files stored in three REST calls, two subscriptions on two
 * receivers. Every (subscription, file) notification arrives exactly once, and each has exactly
 * one attempt record: the record shares the delivery's completion commit (jobs/worker.ts), and
 * claims share the group commit with the outcomes before them (jobs/queue.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadBase } from '../helpers/rest.js';
import { useServer } from '../helpers/use-server.js';
import { sleep, startReceiver, type Receiver } from './receiver.js';

const FILES = 300;

let receivers: Receiver[] = [];
const subscriptions: number[] = [];
const srv = useServer({ env: { STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8' } });

beforeAll(async () => {
  receivers = await Promise.all([startReceiver(), startReceiver()]);
  for (const r of receivers) {
    const res = await srv.call('POST', '/webhooks/', { body: JSON.stringify({ target_url: r.url, event: 'file.stored' }) });
    expect(res.status).toBe(201);
    subscriptions.push(res.json.id);
  }
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

async function uploadUnstored(count: number): Promise<string[]> {
  const files = Array.from({ length: count }, (_, i) => ({ field: `f${i}`, name: `f${i}.txt`, data: `burst ${i} ${Math.random()}` }));
  const r = await uploadBase(srv.upload, srv.keys.public_key, files, { UPLOADCARE_STORE: '0' });
  expect(r.status).toBe(200);
  return Object.values(r.json as Record<string, string>);
}

describe(`a burst of ${FILES} file.stored events x 2 subscriptions`, () => {
  it('reaches each subscription exactly once per file, with one attempt record each', async () => {
    const uuids: string[] = [];
    while (uuids.length < FILES) uuids.push(...(await uploadUnstored(100)));
    for (let i = 0; i < FILES; i += 100) {
      const res = await srv.call('PUT', '/files/storage/', { body: JSON.stringify(uuids.slice(i, i + 100)) });
      expect(res.status).toBe(200);
    }
    const stored = (r: { json?: { hook?: { event?: string } } }) => r.json?.hook?.event === 'file.stored';
    for (const r of receivers) await r.waitFor(FILES, 120_000, stored);
    await sleep(1500); // a late duplicate would arrive meanwhile

    for (const [i, r] of receivers.entries()) {
      const files = r.received.filter(stored).map((hit) => hit.json.data.uuid as string);
      expect(files).toHaveLength(FILES);
      expect(new Set(files)).toEqual(new Set(uuids));
      expect(r.received.filter(stored).every((hit) => hit.json.hook.id === subscriptions[i])).toBe(true);
    }
    for (const id of subscriptions) {
      const page = await srv.call('GET', `/webhooks/${id}/deliveries/?limit=1000`);
      expect(page.status).toBe(200);
      const records = page.json.results as Array<{ success: boolean; attempt: number; event: string }>;
      expect(records).toHaveLength(FILES);
      expect(records.every((d) => d.success && d.attempt === 1 && d.event === 'file.stored')).toBe(true);
    }
  });
});
