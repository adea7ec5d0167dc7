/**
 * A batch of one project's files read or written by uuid (a fan-out's reads, a batch store) is
 * found through the uuid, not by walking the project's files: on SQLite, which has no statistics,
 * the plain `project_id = ?` beside the `uuid IN (…)` took an index starting with project_id, a
 * cost that grew with the project. Files of another project stay out on both stores.
 */
import crypto from 'node:crypto';
import { CompiledQuery, type KyselyPlugin, type RootOperationNode } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FileRecord } from '../../src/core/file-record.js';
import type { Db } from '../../src/db/connect.js';
import { FileRepo } from '../../src/files/repo.js';
import { usingPostgres } from '../helpers/server.js';
import { migratedStore, type TestStore } from '../helpers/store.js';

let store: TestStore;
let repo: FileRepo;
let captured: Db;
let seq = 0;
/** The statements the repo ran on `files`, as compiled. */
const seen: CompiledQuery[] = [];

beforeAll(async () => {
  store = await migratedStore('batch-by-uuid');
  const capture: KyselyPlugin = {
    transformQuery: ({ node, queryId }) => {
      seen.push(store.db.kysely.getExecutor().compileQuery(node as RootOperationNode, queryId));
      return node;
    },
    transformResult: async ({ result }) => result,
  };
  captured = { ...store.db, kysely: store.db.kysely.withPlugin(capture) };
  repo = new FileRepo(captured);
});
afterAll(() => store?.close());

async function project(): Promise<number> {
  const r = await store.db.kysely.insertInto('projects').values({ name: 'p', pub_key: `p-${crypto.randomUUID()}`, autostore: 0, signed_uploads: 0, created_us: 1 }).returning('id').executeTakeFirstOrThrow();
  return Number(r.id);
}

async function newFile(projectId: number): Promise<FileRecord> {
  const uuid = crypto.randomUUID();
  const file: FileRecord = {
    uuid, projectId, uploadedUs: 1_700_000_000_000_000 + ++seq, storedUs: null, removedUs: null, size: 1, mimeType: 'text/plain', declaredType: 'text/plain',
    originalFilename: 'a.txt', filename: 'a.txt', isImage: false, isReady: true, contentInfo: null, metadata: {}, appdata: {}, blobKey: `files/${uuid}`,
    md5: 'x', sourceUrl: null, tags: [],
  };
  await store.db.transaction((trx) => new FileRepo(store.db).insert(trx, file));
  return file;
}

describe('a batch of files by uuid', () => {
  it('reads, locks and stores only the project\'s files among the uuids', async () => {
    const [p1, p2] = [await project(), await project()];
    const mine = [await newFile(p1), await newFile(p1)];
    const other = await newFile(p2);
    const uuids = [...mine.map((f) => f.uuid), other.uuid];
    expect((await repo.getMany(p1, uuids)).map((f) => f.uuid).sort()).toEqual(mine.map((f) => f.uuid).sort());
    const locked = await store.db.transaction((trx) => repo.getManyForUpdate(trx, p1, uuids));
    expect([...locked.keys()].sort()).toEqual(mine.map((f) => f.uuid).sort());
    await store.db.transaction((trx) => repo.markStored(trx, p1, uuids, 42));
    const stored = await store.db.kysely.selectFrom('files').select(['uuid', 'stored_us']).where('uuid', 'in', uuids).execute();
    expect(Object.fromEntries(stored.map((r) => [r.uuid, r.stored_us === null ? null : Number(r.stored_us)]))).toEqual({ [mine[0]!.uuid]: 42, [mine[1]!.uuid]: 42, [other.uuid]: null });
  });

  it.skipIf(usingPostgres())('is found through the uuid index, whatever the project\'s size (SQLite)', async () => {
    const p = await project();
    const files: FileRecord[] = [];
    for (let i = 0; i < 30; i++) files.push(await newFile(p));
    const uuids = files.slice(0, 5).map((f) => f.uuid);
    seen.length = 0;
    await repo.getMany(p, uuids);
    await captured.kysely.transaction().execute((trx) => repo.getManyForUpdate(trx, p, uuids));
    await captured.kysely.transaction().execute((trx) => repo.markStored(trx, p, uuids, 43));
    const statements = seen.filter((q) => /"files"/.test(q.sql));
    expect(statements).toHaveLength(3);
    for (const q of statements) {
      const plan = await store.db.kysely.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${q.sql}`, [...q.parameters]));
      const details = plan.rows.map((r) => r.detail).join(' | ');
      expect(details).toMatch(/\(uuid=\?\)/);
      expect(details).not.toMatch(/project_id=\?/);
    }
  });
});
