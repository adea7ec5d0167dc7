/**
 * The file-event outbox against the real store: a change's events become its consumers' jobs in
 * its transaction (one question per project), or `event.file` jobs on a process that runs no
 * feature. And the webhooks feature's "which of these events has a subscription" statement.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connect.js';
import { FileEventOutbox } from '../../src/jobs/event-outbox.js';
import { systemInitiator, type FileEventName } from '../../src/jobs/file-events.js';
import { migratedStore, type TestStore } from '../helpers/store.js';
import { ProjectRepo } from '../../src/projects/repo.js';
import { WebhookRepo } from '../../src/webhooks/repo.js';

let store: TestStore;
let db: Db;
beforeAll(async () => {
  store = await migratedStore('outbox');
  db = store.db;
});
afterAll(() => store?.close());

const written = async (uuidPrefix: string) =>
  (await db.kysely.selectFrom('jobs').select('payload').where('kind', '=', 'event.file').where('payload', 'like', `%${uuidPrefix}%`).execute()).length;

describe('FileEventOutbox', () => {
  it('writes every event as an event.file job until it knows its consumers (the CLI), and none after an empty list', async () => {
    const o = new FileEventOutbox();
    await db.transaction((trx) =>
      o.recordMany(trx, [
        { projectId: 1, event: 'file.stored', uuid: 'unknown-1', initiator: systemInitiator() },
        { projectId: 2, event: 'file.deleted', uuid: 'unknown-2', initiator: systemInitiator() },
      ]),
    );
    expect(await written('unknown-')).toBe(2);
    o.heardBy([]);
    await db.transaction((trx) => o.record(trx, { projectId: 1, event: 'file.stored', uuid: 'nobody-1', initiator: systemInitiator() }));
    expect(await written('nobody-')).toBe(0);
  });

  it("a consumer's jobs are written in the change's transaction: with its commit, and not at all after a rollback", async () => {
    const o = new FileEventOutbox();
    const seen: string[][] = [];
    o.heardBy([
      async (_db, projectId, events) => {
        seen.push(events.map((e) => `${projectId} ${e.uuid}`));
        // Only what it hears: file.stored of project 3.
        return events.filter((e) => e.event === 'file.stored' && projectId === 3).map((e) => ({ kind: 'blob.delete' as const, payload: { projectId, uuid: e.uuid, blobKey: 'consumed' } }));
      },
    ]);
    const consumed = async (prefix: string) => (await db.kysely.selectFrom('jobs').select('payload').where('kind', '=', 'blob.delete').where('payload', 'like', `%${prefix}%`).execute()).length;
    await db.transaction((trx) =>
      o.recordMany(trx, [
        { projectId: 3, event: 'file.stored', uuid: 'consumed-1', initiator: systemInitiator() },
        { projectId: 4, event: 'file.stored', uuid: 'consumed-2', initiator: systemInitiator() },
        { projectId: 3, event: 'file.deleted', uuid: 'consumed-3', initiator: systemInitiator() },
        { projectId: 3, event: 'file.stored', uuid: 'consumed-4', initiator: systemInitiator() },
      ]),
    );
    // Asked once per project with that project's events; no event.file job for anyone.
    expect(seen).toEqual([['3 consumed-1', '3 consumed-3', '3 consumed-4'], ['4 consumed-2']]);
    expect(await consumed('consumed-')).toBe(2);
    expect(await written('consumed-')).toBe(0);
    await expect(
      db.transaction(async (trx) => {
        await o.record(trx, { projectId: 3, event: 'file.stored', uuid: 'rolled-back', initiator: systemInitiator() });
        throw new Error('the change fails');
      }),
    ).rejects.toThrow('the change fails');
    expect(await consumed('rolled-back')).toBe(0);
  });

  it('activeEvents answers the asked events with an active subscription of that project, for every list length', async () => {
    const projects = new ProjectRepo(db);
    const { id: mine } = await projects.insert({ name: 'active-mine', pubKey: 'activeminepub', autostore: true, signedUploads: false, createdUs: 1 }, 'activeminesecret-0123456789');
    const { id: other } = await projects.insert({ name: 'active-other', pubKey: 'activeotherpub', autostore: true, signedUploads: false, createdUs: 1 }, 'activeothersecret-0123456789');
    const repo = new WebhookRepo(db);
    const sub = (projectId: number, event: string, isActive: boolean, port = 9) =>
      repo.insert({ projectId, event, targetUrl: `http://127.0.0.1:${port}/`, isActive, signingSecret: null, version: '0.7', createdUs: 1, updatedUs: 1 });
    await sub(mine, 'file.stored', true);
    await sub(mine, 'file.deleted', true);
    await sub(mine, 'file.deleted', true, 10);
    await sub(mine, 'file.uploaded', false);
    await sub(other, 'file.uploaded', true);
    await sub(other, 'file.infected', true);
    const all: FileEventName[] = ['file.uploaded', 'file.stored', 'file.deleted', 'file.infected', 'file.info_updated'];
    // Each length twice: its first run builds the statement, the second reuses it (lengths past the prebuilt ones are built each time).
    for (let n = 1; n <= all.length; n++) {
      for (const events of [all.slice(0, n), all.slice(all.length - n)]) {
        for (let run = 0; run < 2; run++) {
          const expected = events.filter((e) => e === 'file.stored' || e === 'file.deleted');
          expect([...(await repo.activeEvents(db.kysely, mine, events))].sort()).toEqual([...expected].sort());
          const expectedOther = events.filter((e) => e === 'file.uploaded' || e === 'file.infected');
          expect([...(await repo.activeEvents(db.kysely, other, events))].sort()).toEqual([...expectedOther].sort());
        }
      }
    }
    expect(await repo.activeEvents(db.kysely, mine, [])).toEqual(new Set());
  });
});
