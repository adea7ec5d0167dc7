/**
 * A listing page's reads below the HTTP server (src/s3/listing.ts), every statement counted: a page
 * of common prefixes reads each order in batches, not once per prefix (files uploaded other ways are
 * each their own prefix `<uuid>/` under the delimiter `/`, so a page may hold a thousand of them).
 */
import crypto from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listPage } from '../../src/s3/listing.js';
import { ObjectRepo } from '../../src/s3/repo.js';
import { countingStatements } from '../helpers/statement-count.js';
import { migratedStore, type TestStore } from '../helpers/store.js';

let store: TestStore;
let project: number;

beforeAll(async () => {
  store = await migratedStore('s3-listing-reads');
  const db = store.db.kysely;
  const r = await db.insertInto('projects').values({ name: 's3', pub_key: `p-${crypto.randomUUID()}`, autostore: 1, signed_uploads: 0, created_us: 1 }).returning('id').executeTakeFirstOrThrow();
  project = Number(r.id);
  // 30 unkeyed files (each its own prefix), 10 keys under dir/, 5 keys in directories of their own.
  const keys: Array<string | null> = [...Array.from({ length: 30 }, () => null), ...Array.from({ length: 10 }, (_, i) => `dir/k${i}`), ...Array.from({ length: 5 }, (_, i) => `a${i}/x`)];
  for (const [i, key] of keys.entries()) {
    await sql`insert into files (uuid, project_id, uploaded_us, stored_us, size, mime_type, original_filename, filename, is_image, is_ready, metadata, appdata, md5, tags, detected_mime, object_key)
      values (${crypto.randomUUID()}, ${project}, ${1_700_000_000_000_000 + i}, ${1}, ${i}, 'text/plain', 'f.txt', 'f.txt', 0, 1, '{}', '{}', 'x', '[]', 'text/plain', ${key})`.execute(db);
  }
}, 60_000);
afterAll(() => store?.close());

describe('S3 listing reads', () => {
  it('a page of common prefixes reads each order once, not once per prefix', async () => {
    const { db, take } = countingStatements(store.db);
    const reads = { repo: new ObjectRepo(db) };
    take();
    const page = await listPage(reads, project, { prefix: '', delimiter: '/', maxKeys: 1000, after: '' });
    expect(page.prefixes.length).toBe(30 + 1 + 5);
    expect(page.prefixes.filter((p) => !/^[0-9a-f-]{36}\/$/.test(p)).sort()).toEqual(['a0/', 'a1/', 'a2/', 'a3/', 'a4/', 'dir/']);
    expect(take()).toBeLessThanOrEqual(4);
    // A page cut short by max-keys goes on from past its last prefix.
    const first = await listPage(reads, project, { prefix: '', delimiter: '/', maxKeys: 20, after: '' });
    const rest = await listPage(reads, project, { prefix: '', delimiter: '/', maxKeys: 1000, after: first.next });
    expect([first.truncated, [...first.prefixes, ...rest.prefixes]]).toEqual([true, page.prefixes]);
  });
});
