/**
 * The two reads every new file's transaction makes of its project (which of its events have an
 * active webhook subscription; which add-ons run on upload) against the real store, with every
 * statement run through the store handle counted. On SQLite a write transaction holds the write
 * lock from BEGIN IMMEDIATE to its end, so the uploads of one group-commit batch (one transaction)
 * share one read of each per project (src/db/transaction-reads.ts); the next transaction reads
 * again and sees what changed. On PostgreSQL every call reads.
 */
import type { Transaction } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connect.js';
import type { Database } from '../../src/db/schema.js';
import { AddonRepo } from '../../src/addons/repo.js';
import { ProjectRepo } from '../../src/projects/repo.js';
import { WebhookRepo } from '../../src/webhooks/repo.js';
import { usingPostgres } from '../helpers/server.js';
import { countingStatements } from '../helpers/statement-count.js';
import { migratedStore, type TestStore } from '../helpers/store.js';

let store: TestStore;
let counted: Db;
/** Statements executed through `counted` since the last call. */
let take: () => number;
let mine: number;
let other: number;

beforeAll(async () => {
  store = await migratedStore('transaction-reads');
  const projects = new ProjectRepo(store.db);
  mine = (await projects.insert({ name: 'reads-mine', pubKey: 'readsminepub', autostore: true, signedUploads: false, createdUs: 1 }, 'readsminesecret-0123456789')).id;
  other = (await projects.insert({ name: 'reads-other', pubKey: 'readsotherpub', autostore: true, signedUploads: false, createdUs: 1 }, 'readsothersecret-0123456789')).id;
  ({ db: counted, take } = countingStatements(store.db));
}, 60_000);
afterAll(() => store?.close());

/** A transaction on the counting handle (Db.transaction would open it on the uncounted one). */
const inTransaction = <T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> => counted.kysely.transaction().execute(fn);

const subscribe = (projectId: number, event: string) =>
  new WebhookRepo(store.db).insert({ projectId, event, targetUrl: 'http://127.0.0.1:9/', isActive: true, signingSecret: null, version: '0.7', createdUs: 1, updatedUs: 1 });

const pair = ['file.uploaded', 'file.stored'] as const;
/** Reads per project in one transaction: SQLite once, PostgreSQL every time. */
const perTransaction = (calls: number) => (usingPostgres() ? calls : 1);

describe('per-transaction reads of a new file\'s project', () => {
  it('activeEvents: one statement per project and event list in a transaction, a fresh read in the next', async () => {
    await subscribe(mine, 'file.stored');
    const repo = new WebhookRepo(counted);
    take();
    const answers = await inTransaction(async (trx) => {
      const out: string[][] = [];
      for (let i = 0; i < 5; i++) out.push([...(await repo.activeEvents(trx, mine, pair))].sort());
      out.push([...(await repo.activeEvents(trx, other, pair))].sort());
      out.push([...(await repo.activeEvents(trx, mine, ['file.stored']))].sort());
      return out;
    });
    expect(answers).toEqual([...Array(5).fill(['file.stored']), [], ['file.stored']]);
    // Five asks of (mine, the pair), one of (other, the pair), one of (mine, file.stored).
    expect(take()).toBe(perTransaction(5) + 1 + 1);

    // A subscription made between two transactions is seen by the next one.
    await subscribe(mine, 'file.uploaded');
    const next = await inTransaction(async (trx) => [...(await repo.activeEvents(trx, mine, pair))].sort());
    expect(next).toEqual(['file.stored', 'file.uploaded']);
    // Outside a transaction: read every time.
    take();
    for (let i = 0; i < 3; i++) await repo.activeEvents(counted.kysely, mine, pair);
    expect(take()).toBe(3);
  });

  it('the add-on setting: one statement per project in a transaction, a fresh read in the next', async () => {
    const repo = new AddonRepo(counted);
    await repo.setOnUpload(mine, ['uc_clamav_virus_scan'], 1);
    take();
    const answers = await inTransaction(async (trx) => {
      const out: string[][] = [];
      for (let i = 0; i < 4; i++) out.push(await repo.onUpload(mine, trx));
      out.push(await repo.onUpload(other, trx));
      return out;
    });
    expect(answers).toEqual([...Array(4).fill(['uc_clamav_virus_scan']), []]);
    expect(take()).toBe(perTransaction(4) + 1);

    await repo.setOnUpload(mine, [], 2);
    expect(await inTransaction((trx) => repo.onUpload(mine, trx))).toEqual([]);
  });

  it('a transaction that failed leaves nothing remembered for the one that runs its writes again', async () => {
    const repo = new WebhookRepo(counted);
    await expect(
      inTransaction(async (trx) => {
        await repo.activeEvents(trx, other, pair);
        throw new Error('a write of the batch failed');
      }),
    ).rejects.toThrow(/failed/);
    await subscribe(other, 'file.uploaded');
    expect([...(await inTransaction((trx) => repo.activeEvents(trx, other, pair)))]).toEqual(['file.uploaded']);
  });
});
