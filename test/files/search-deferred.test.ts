/**
 * SQLite: a new file's text joins the trigram index after its own transaction, in a batch
 * (migration 0022, src/files/text/repo.ts), and a search first indexes every committed file, so it
 * answers as if each had been indexed with its row: also after a pending file is changed or
 * deleted. Straight on the metadata store, as test/files/search-index.test.ts.
 */
import crypto from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connect.js';
import { FileRepo } from '../../src/files/repo.js';
import { parseSearch, type SearchQuery } from '../../src/files/search-query.js';
import type { FileRecord } from '../../src/core/file-record.js';
import { usingPostgres } from '../helpers/server.js';
import { migratedStore, type TestStore } from '../helpers/store.js';

let store: TestStore;
let db: Db;
let repo: FileRepo;
let projectId: number;
let seq = 0;

function query(body: unknown): SearchQuery {
  const parsed = parseSearch(body);
  if ('errors' in parsed) throw new Error(JSON.stringify(parsed.errors));
  return parsed.query;
}

function file(name: string): FileRecord {
  seq++;
  return {
    uuid: crypto.randomUUID(), projectId, uploadedUs: 1_700_000_000_000_000 + seq, storedUs: null, removedUs: null, size: 1, mimeType: 'text/plain',
    declaredType: 'text/plain', originalFilename: name, filename: name, isImage: false, isReady: true, contentInfo: null, metadata: {}, appdata: {},
    blobKey: null, md5: 'x', sourceUrl: null, tags: [],
  };
}

const count = async (table: 'files_text' | 'files_text_pending') => Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(db.kysely)).rows[0]!.n);
const found = (text: string) => repo.searchCount(projectId, query({ query: text }));

describe.skipIf(usingPostgres())('the deferred trigram index (SQLite)', () => {
  beforeAll(async () => {
    store = await migratedStore('text-deferred');
    db = store.db;
    repo = new FileRepo(db);
    await db.kysely.insertInto('projects').values({ name: 'p', pub_key: `p-${crypto.randomUUID()}`, autostore: 1, signed_uploads: 0, created_us: 1 }).execute();
    projectId = Number((await db.kysely.selectFrom('projects').select('id').executeTakeFirstOrThrow()).id);
  });
  afterAll(() => store?.close());

  it('leaves a new file out of the index in its own transaction, and a search indexes it first', async () => {
    await db.transaction((trx) => repo.insert(trx, file('wombat-burrow.txt')));
    expect(await count('files_text')).toBe(0);
    expect(await count('files_text_pending')).toBe(1);
    expect(await found('bat-bur')).toBe(1);
    expect(await count('files_text')).toBe(1);
    expect(await count('files_text_pending')).toBe(0);
  });

  it('finds a pending file by its text as changed before it was indexed, and never a deleted one', async () => {
    const renamed = file('echidna-nest.txt');
    const deleted = file('platypus-river.txt');
    await db.transaction(async (trx) => {
      await repo.insert(trx, renamed);
      await repo.insert(trx, deleted);
    });
    await repo.update(db.kysely, projectId, renamed.uuid, { metadata: JSON.stringify({ note: 'quokka sighting' }) });
    await db.kysely.deleteFrom('files').where('uuid', '=', deleted.uuid).execute();
    expect(await count('files_text_pending')).toBe(1);
    expect(await repo.searchCount(projectId, query({ phrase: { metadata: 'quokka' } }))).toBe(1);
    expect(await found('echidna')).toBe(1);
    expect(await found('platypus')).toBe(0);
    // Once indexed, a change is written to the index in its own transaction again.
    await repo.update(db.kysely, projectId, renamed.uuid, { metadata: JSON.stringify({ note: 'numbat' }) });
    expect(await count('files_text_pending')).toBe(0);
    expect(await repo.searchCount(projectId, query({ phrase: { metadata: 'quokka' } }))).toBe(0);
    expect(await repo.searchCount(projectId, query({ phrase: { metadata: 'numbat' } }))).toBe(1);
  });

  it('indexes the pending files of a store another process wrote, and after a restart', async () => {
    await db.transaction((trx) => repo.insert(trx, file('bilby-den.txt')));
    // Another FileRepo (a second node, or this one after a restart) finds the pending list in the store.
    expect(await new FileRepo(db).searchCount(projectId, query({ query: 'bilby' }))).toBe(1);
    expect(await count('files_text_pending')).toBe(0);
  });
});
