/**
 * Subscription reads of the webhook jobs that start together (a claim's deliveries, fan-outs) go
 * to the store as one query, against the real store: each caller still gets what is stored now,
 * only its own project's subscription, and a fan-out only the active ones of its event.
 */
import type { KyselyPlugin, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connect.js';
import { ProjectRepo } from '../../src/projects/repo.js';
import { WebhookRepo, type Subscription } from '../../src/webhooks/repo.js';
import { SubscriptionReads } from '../../src/webhooks/subscription-reads.js';
import { migratedStore, type TestStore } from '../helpers/store.js';

let store: TestStore;
let db: Db;
let selects = 0;
let reads: SubscriptionReads;
const projects: number[] = [];
const subs: Subscription[] = [];

beforeAll(async () => {
  store = await migratedStore('subreads');
  db = store.db;
  const projectRepo = new ProjectRepo(db);
  for (const name of ['a', 'b']) projects.push((await projectRepo.insert({ name, pubKey: `pub-${name}`, autostore: true, signedUploads: false, createdUs: 1 }, `secret-${name}`)).id);
  const repo = new WebhookRepo(db);
  const sub = (projectId: number, event: string, targetUrl: string, isActive = true) =>
    repo.insert({ projectId, event, targetUrl, isActive, signingSecret: null, version: '0.7', createdUs: 1, updatedUs: 1 });
  subs.push(await sub(projects[0]!, 'file.stored', 'http://a/1'), await sub(projects[0]!, 'file.stored', 'http://a/2'), await sub(projects[0]!, 'file.deleted', 'http://a/3'));
  subs.push(await sub(projects[0]!, 'file.stored', 'http://a/off', false), await sub(projects[1]!, 'file.stored', 'http://b/1'));
  // Statements counted on the handle the reads use.
  const counting: KyselyPlugin = {
    transformQuery: ({ node }): RootOperationNode => {
      if (node.kind === 'SelectQueryNode') selects++;
      return node;
    },
    transformResult: async ({ result }): Promise<QueryResult<UnknownRow>> => result,
  };
  reads = new SubscriptionReads(new WebhookRepo({ ...db, kysely: db.kysely.withPlugin(counting) }));
});
afterAll(() => store?.close());

describe('SubscriptionReads', () => {
  it('answers the gets of one turn with one query, each with its own project’s subscription or null', async () => {
    const [a, b] = projects as [number, number];
    selects = 0;
    const got = await Promise.all([reads.get(a, subs[0]!.id), reads.get(a, subs[3]!.id), reads.get(b, subs[4]!.id), reads.get(b, subs[0]!.id), reads.get(a, 999_999)]);
    expect(selects).toBe(1);
    expect(got.map((s) => s?.targetUrl ?? null)).toEqual(['http://a/1', 'http://a/off', 'http://b/1', null, null]);
    expect(got[1]?.isActive).toBe(false);
  });

  it('answers the fan-outs of one turn with one query: the active subscriptions of each project to its event', async () => {
    const [a, b] = projects as [number, number];
    selects = 0;
    const got = await Promise.all([reads.activeFor(a, 'file.stored'), reads.activeFor(a, 'file.deleted'), reads.activeFor(b, 'file.stored'), reads.activeFor(b, 'file.deleted')]);
    expect(selects).toBe(1);
    expect(got.map((list) => list.map((s) => s.targetUrl))).toEqual([['http://a/1', 'http://a/2'], ['http://a/3'], ['http://b/1'], []]);
  });

  it('reads what is stored at the time of each get', async () => {
    const [a] = projects as [number];
    await new WebhookRepo(db).update(a, subs[1]!.id, { isActive: false }, 2);
    expect((await reads.get(a, subs[1]!.id))?.isActive).toBe(false);
    expect((await reads.activeFor(a, 'file.stored')).map((s) => s.targetUrl)).toEqual(['http://a/1']);
  });
});
