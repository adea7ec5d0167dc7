/**
 * The node's one cache of file rows (src/files/record-cache.ts) on a real store: `current` answers
 * from memory only while the store's change stamp holds, `recent` (the CDN) also within its window,
 * unknown uuids included; a dropped file is read again, and a row read across a drop is not kept;
 * entries no read would take go as new ones are read (the soak's heap once climbed with them).
 * The REST reads through it after every kind of change: info-cache.test.ts.
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FileRecord } from '../../src/core/file-record.js';
import { FileRecordCache } from '../../src/files/record-cache.js';
import { FileRepo } from '../../src/files/repo.js';
import { migratedStore, type TestStore } from '../helpers/store.js';

let store: TestStore;
let repo: FileRepo;
let projectId: number;
let reads = 0;
let seq = 0;
const byUuid = (uuid: string) => {
  reads++;
  return repo.byUuid(uuid);
};
const noStamp = () => null;

beforeAll(async () => {
  store = await migratedStore('record-cache');
  repo = new FileRepo(store.db);
  await store.db.kysely.insertInto('projects').values({ name: 'p', pub_key: `p-${crypto.randomUUID()}`, autostore: 1, signed_uploads: 0, created_us: 1 }).execute();
  projectId = Number((await store.db.kysely.selectFrom('projects').select('id').executeTakeFirstOrThrow()).id);
});
afterAll(() => store?.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function newFile(): Promise<FileRecord> {
  const uuid = crypto.randomUUID();
  const file: FileRecord = {
    uuid, projectId, uploadedUs: 1_700_000_000_000_000 + ++seq, storedUs: null, removedUs: null, size: 1, mimeType: 'text/plain', declaredType: 'text/plain',
    originalFilename: 'a.txt', filename: 'a.txt', isImage: false, isReady: true, contentInfo: null, metadata: {}, appdata: {}, blobKey: `files/${uuid}`,
    md5: 'x', sourceUrl: null, tags: [],
  };
  await store.db.transaction((trx) => repo.insert(trx, file));
  return file;
}

/** A change of the file's row, as any node or process might make it. */
const rename = (uuid: string, filename: string) => store.db.kysely.updateTable('files').set({ filename }).where('uuid', '=', uuid).execute();

describe('the file row cache, current reads', () => {
  it('answer from memory while the change stamp holds, and read again once any row changed', async (ctx) => {
    // PostgreSQL: a stamp only while this store is its schema's only writer (db/pg-alone.ts).
    await store.db.cacheWhileAlone?.();
    if (store.db.changeStamp() === null) ctx.skip();
    const cache = new FileRecordCache(() => store.db.changeStamp(), byUuid);
    const file = await newFile();
    reads = 0;
    expect((await cache.current(file.uuid))?.filename).toBe('a.txt');
    expect(cache.peek(file.uuid)?.filename).toBe('a.txt');
    expect((await cache.current(file.uuid))?.filename).toBe('a.txt');
    expect(reads).toBe(1);
    await rename(file.uuid, 'b.txt');
    expect(cache.peek(file.uuid)).toBeUndefined();
    expect((await cache.current(file.uuid))?.filename).toBe('b.txt');
    expect(reads).toBe(2);
    // An unknown uuid is kept as such while the stamp holds.
    const missing = crypto.randomUUID();
    expect(await cache.current(missing)).toBeNull();
    expect(cache.peek(missing)).toBeNull();
  });

  it('past the window, a recent read the stamp vouches for starts a new window: one stamp read per window', async (ctx) => {
    await store.db.cacheWhileAlone?.();
    if (store.db.changeStamp() === null) ctx.skip();
    let stampReads = 0;
    const recentForMs = 150;
    const cache = new FileRecordCache(() => (stampReads++, store.db.changeStamp()), byUuid, { recentForMs });
    const file = await newFile();
    reads = 0;
    expect((await cache.recent(file.uuid))?.filename).toBe('a.txt');
    await sleep(recentForMs + 20);
    stampReads = 0;
    for (let i = 0; i < 50; i++) expect((await cache.recent(file.uuid))?.filename).toBe('a.txt');
    expect(reads).toBe(1);
    expect(stampReads).toBe(1);
    // A change still shows once the new window has passed.
    await rename(file.uuid, 'c.txt');
    await sleep(recentForMs + 20);
    expect((await cache.recent(file.uuid))?.filename).toBe('c.txt');
    expect(reads).toBe(2);
  });

  it('read the store every time without a stamp, even a row read a moment ago', async () => {
    const cache = new FileRecordCache(noStamp, byUuid);
    const file = await newFile();
    reads = 0;
    await cache.current(file.uuid);
    await rename(file.uuid, 'c.txt');
    expect(cache.peek(file.uuid)).toBeUndefined();
    expect((await cache.current(file.uuid))?.filename).toBe('c.txt');
    expect(reads).toBe(2);
  });
});

describe('the file row cache, recent reads', () => {
  it('read the store once per uuid within the window, unknown uuids included', async () => {
    const cache = new FileRecordCache(noStamp, byUuid, { recentForMs: 60_000 });
    const uuid = crypto.randomUUID();
    reads = 0;
    expect(await cache.recent(uuid)).toBeNull();
    expect(await cache.recent(uuid)).toBeNull();
    expect(reads).toBe(1);
  });

  it('answer a change only once the window has passed, or at once when the file is dropped', async () => {
    const cache = new FileRecordCache(noStamp, byUuid, { recentForMs: 60_000 });
    const file = await newFile();
    await cache.recent(file.uuid);
    await rename(file.uuid, 'd.txt');
    expect((await cache.recent(file.uuid))?.filename).toBe('a.txt');
    cache.drop(file.uuid);
    expect((await cache.recent(file.uuid))?.filename).toBe('d.txt');
  });

  it('keep no row read while the file was dropped', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    const cache = new FileRecordCache(noStamp, async (uuid) => {
      const row = await byUuid(uuid);
      await held;
      return row;
    }, { recentForMs: 60_000 });
    const file = await newFile();
    const first = cache.recent(file.uuid);
    await sleep(50);
    cache.drop(file.uuid);
    release();
    expect((await first)?.filename).toBe('a.txt');
    expect(cache.size).toBe(0);
  });

  it('drop entries no read would take as new ones are read instead of holding them until full', async () => {
    const recentForMs = 1000;
    const cache = new FileRecordCache(noStamp, byUuid, { recentForMs });
    for (let i = 0; i < 100; i++) await cache.recent(crypto.randomUUID());
    // Rows read within the window stay (how many depends on the store's speed).
    expect(cache.size).toBeGreaterThan(1);
    await sleep(recentForMs + 100);
    await cache.recent(crypto.randomUUID());
    expect(cache.size).toBe(1);
  });

  it('read a row again once its entry is past the window, and keep the fresh entry', async () => {
    const recentForMs = 50;
    const cache = new FileRecordCache(noStamp, byUuid, { recentForMs });
    const uuid = crypto.randomUUID();
    await cache.recent(uuid);
    await sleep(recentForMs * 2);
    reads = 0;
    await cache.recent(uuid);
    await cache.recent(uuid);
    expect(reads).toBe(1);
    expect(cache.size).toBe(1);
  });

  it('hold at most maxEntries, the oldest going first', async () => {
    const cache = new FileRecordCache(noStamp, byUuid, { recentForMs: 60_000, maxEntries: 3 });
    const uuids = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    for (const uuid of uuids) await cache.recent(uuid);
    expect(cache.size).toBe(3);
    reads = 0;
    for (const uuid of uuids.slice(1)) await cache.recent(uuid);
    expect(reads).toBe(0);
    await cache.recent(uuids[0]!);
    expect(reads).toBe(1);
  });
});
