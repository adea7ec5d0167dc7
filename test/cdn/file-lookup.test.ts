/**
 * The CDN's short-lived cache of file rows (src/delivery/lookup.ts) on a real store: it answers
 * from memory within its TTL and holds only about the rows read within the TTL, not every row
 * read since the last time it filled up (the soak's heap climbed with it).
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileLookup } from '../../src/delivery/lookup.js';
import { FileRepo } from '../../src/files/repo.js';
import { migratedStore, type TestStore } from '../helpers/store.js';

let store: TestStore;
let repo: FileRepo;
let reads = 0;
beforeAll(async () => {
  store = await migratedStore('lookup');
  const real = new FileRepo(store.db);
  repo = Object.assign(Object.create(real) as FileRepo, {
    byUuid: (uuid: string) => {
      reads++;
      return real.byUuid(uuid);
    },
  });
});
afterAll(() => store?.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('FileLookup', () => {
  it('reads the store once per uuid within the TTL', async () => {
    const lookup = new FileLookup(repo, 60_000);
    const uuid = crypto.randomUUID();
    reads = 0;
    expect(await lookup.get(uuid)).toBeNull();
    expect(await lookup.get(uuid)).toBeNull();
    expect(reads).toBe(1);
  });

  it('drops expired rows as new ones are read instead of holding them until it is full', async () => {
    const ttlMs = 1000;
    const lookup = new FileLookup(repo, ttlMs);
    for (let i = 0; i < 100; i++) await lookup.get(crypto.randomUUID());
    // Rows read within the TTL stay (how many depends on the store's speed).
    expect(lookup.size).toBeGreaterThan(1);
    await sleep(ttlMs + 100);
    await lookup.get(crypto.randomUUID());
    expect(lookup.size).toBe(1);
  });

  it('reads a row again once its entry has expired, and keeps the fresh entry', async () => {
    const ttlMs = 50;
    const lookup = new FileLookup(repo, ttlMs);
    const uuid = crypto.randomUUID();
    await lookup.get(uuid);
    await sleep(ttlMs * 2);
    reads = 0;
    await lookup.get(uuid);
    await lookup.get(uuid);
    expect(reads).toBe(1);
    expect(lookup.size).toBe(1);
  });
});
