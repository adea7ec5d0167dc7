/**
 * The file-event outbox against the real store: an event is written only when a feature would
 * consume it, and within one transaction (a batch store of many files) a "yes" is asked once per
 * project and event, not once per file (a round trip each on PostgreSQL). A "no" is asked again.
 * The events of one change (an upload stored at once: file.uploaded and file.stored) are one
 * question, and the webhooks feature answers it with one statement.
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

/** An outbox whose one audience hears `heard` and counts the questions. */
function outbox(heard: (projectId: number, event: FileEventName) => boolean): { outbox: FileEventOutbox; asked: () => number } {
  let asked = 0;
  const o = new FileEventOutbox();
  o.heardBy([
    async (_db, projectId, events) => {
      asked++;
      return new Set(events.filter((event) => heard(projectId, event)));
    },
  ]);
  return { outbox: o, asked: () => asked };
}

const written = async (uuidPrefix: string) =>
  (await db.kysely.selectFrom('jobs').select('payload').where('kind', '=', 'event.file').where('payload', 'like', `%${uuidPrefix}%`).execute()).length;

describe('FileEventOutbox', () => {
  it('asks once per project and event within a transaction when the answer is yes, and writes every event', async () => {
    const { outbox: o, asked } = outbox((projectId) => projectId === 1);
    await db.transaction(async (trx) => {
      for (let i = 0; i < 5; i++) await o.record(trx, { projectId: 1, event: 'file.stored', uuid: `yes-${i}`, initiator: systemInitiator() });
      await o.record(trx, { projectId: 1, event: 'file.deleted', uuid: 'yes-other-event', initiator: systemInitiator() });
    });
    expect(asked()).toBe(2);
    expect(await written('yes-')).toBe(6);
    // A new transaction asks again (a subscription may have gone meanwhile).
    await db.transaction((trx) => o.record(trx, { projectId: 1, event: 'file.stored', uuid: 'yes-later', initiator: systemInitiator() }));
    expect(asked()).toBe(3);
  });

  it('asks again after a no, and writes nothing for no one', async () => {
    const { outbox: o, asked } = outbox(() => false);
    await db.transaction(async (trx) => {
      for (let i = 0; i < 3; i++) await o.record(trx, { projectId: 2, event: 'file.stored', uuid: `no-${i}`, initiator: systemInitiator() });
    });
    expect(asked()).toBe(3);
    expect(await written('no-')).toBe(0);
  });

  it("an upload's two events are one question to the webhooks table, and only the subscribed one is written", async () => {
    const { id: projectId } = await new ProjectRepo(db).insert({ name: 'audience', pubKey: 'audiencepub', autostore: true, signedUploads: false, createdUs: 1 }, 'audiencesecret-0123456789');
    const repo = new WebhookRepo(db);
    await repo.insert({ projectId, event: 'file.stored', targetUrl: 'http://127.0.0.1:9/', isActive: true, signingSecret: null, version: '0.7', createdUs: 1, updatedUs: 1 });
    let statements = 0;
    const o = new FileEventOutbox();
    o.heardBy([
      (trx, id, events) => {
        statements++;
        return repo.activeEvents(trx, id, events);
      },
    ]);
    await db.transaction((trx) =>
      o.recordMany(trx, [
        { projectId, event: 'file.uploaded', uuid: 'pair-1', initiator: systemInitiator() },
        { projectId, event: 'file.stored', uuid: 'pair-1', initiator: systemInitiator() },
      ]),
    );
    expect(statements).toBe(1);
    const events = (await db.kysely.selectFrom('jobs').select('payload').where('kind', '=', 'event.file').where('payload', 'like', '%pair-1%').execute()).map((r) => (JSON.parse(r.payload) as { event: string }).event);
    expect(events).toEqual(['file.stored']);
  });

  it("a consumer's jobs are written in the change's transaction: with its commit, and not at all after a rollback", async () => {
    const o = new FileEventOutbox();
    const seen: string[][] = [];
    o.heardBy([], [
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
