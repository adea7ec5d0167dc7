/**
 * Attempt records written together (insertDeliveries, the records of the outcomes one group commit
 * writes) read back exactly as given, on the real store: PostgreSQL takes them as one array per
 * column, so texts that an array literal must quote (quotes, backslashes, commas, braces, `NULL`,
 * non-ASCII) and nulls are the cases to check.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProjectRepo } from '../../src/projects/repo.js';
import { WebhookRepo, insertDeliveries, type NewDelivery } from '../../src/webhooks/repo.js';
import { migratedStore, type TestStore } from '../helpers/store.js';

let store: TestStore;
let repo: WebhookRepo;
let webhookId: number;
let projectId: number;

beforeAll(async () => {
  store = await migratedStore('deliveryrecords');
  projectId = (await new ProjectRepo(store.db).insert({ name: 'a', pubKey: 'pub-a', autostore: true, signedUploads: false, createdUs: 1 }, 'secret-a')).id;
  repo = new WebhookRepo(store.db);
  webhookId = (await repo.insert({ projectId, event: 'file.stored', targetUrl: 'http://a/1', isActive: true, signingSecret: null, version: '0.7', createdUs: 1, updatedUs: 1 })).id;
});
afterAll(() => store?.close());

describe('insertDeliveries', () => {
  it('writes a batch of records, each read back as given', async () => {
    const awkward = ['{"a":[1,2]}', 'say "hi", \\ back\\slash', 'NULL', '', ' spaced ', 'ünïcödé ✓ 𝄞', '{}', 'a,b'];
    const records: NewDelivery[] = awkward.map((text, i) => ({
      webhookId,
      projectId,
      event: 'file.stored',
      eventId: 100 + i,
      attempt: 1 + (i % 3),
      targetUrl: `http://a/1?q=${encodeURIComponent(text)}`,
      startedUs: 1_795_929_505_096_000 + i,
      durationMs: i,
      status: i % 2 === 0 ? 200 : null,
      success: i % 2 === 0,
      error: i % 2 === 0 ? null : text,
      responseExcerpt: i % 2 === 0 ? text : null,
    }));
    await expect(insertDeliveries(store.db.kysely, records)).resolves.toEqual(records.map(() => undefined));
    const read = (await repo.deliveries(webhookId, 100, null)).reverse();
    expect(read.map(({ id: _id, ...r }) => r)).toEqual(records.map(({ projectId: _p, ...r }) => r));
  });
});
