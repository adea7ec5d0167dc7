/**
 * The file list's reads below the HTTP server (src/files/list/repo.ts), with every statement run
 * through the store handle counted: a page is one statement whichever its shape (each shape's query
 * is compiled once and reused, binding each call's own cursors and limit), `total` and `totals`
 * come from one read of the project's counters, and on PostgreSQL concurrent reads of the counters
 * share round trips (db/read-batcher.ts), as do a page and its counters read together
 * (`listWithTotals`: one statement for the pages of one shape asked for together, list/batched/repo.ts).
 */
import crypto from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connect.js';
import { FileListRepo, type ListQuery } from '../../src/files/list/repo.js';
import { countingStatements } from '../helpers/statement-count.js';
import { migratedStore, type TestStore } from '../helpers/store.js';
import { usingPostgres } from '../helpers/server.js';

const T0 = 1_700_000_000_000_000;
let store: TestStore;
let project: number;
let counted: Db;
/** Statements executed through `counted` since the last call. */
let take: () => number;

beforeAll(async () => {
  store = await migratedStore('list-reads');
  const db = store.db.kysely;
  const r = await db.insertInto('projects').values({ name: 'lists', pub_key: `p-${crypto.randomUUID()}`, autostore: 1, signed_uploads: 0, created_us: 1 }).returning('id').executeTakeFirstOrThrow();
  project = Number(r.id);
  // 12 files, one per µs: every 3rd removed, every 2nd of the rest stored.
  for (let i = 0; i < 12; i++) {
    const removed = i % 3 === 0 ? T0 + 100 + i : null;
    const stored = removed === null && i % 2 === 0 ? T0 + 50 + i : null;
    await sql`insert into files (uuid, project_id, uploaded_us, stored_us, removed_us, size, mime_type, original_filename, filename, is_image, is_ready, metadata, appdata, md5, tags, detected_mime)
      values (${crypto.randomUUID()}, ${project}, ${T0 + i}, ${stored}, ${removed}, ${i}, 'text/plain', ${`f${i}.txt`}, ${`f${i}.txt`}, 0, 1, '{}', '{}', 'x', '[]', 'text/plain')`.execute(db);
  }
  await db.insertInto('project_counters').values({ project_id: project, removed_files: 4, stored_files: 4, unstored_files: 4, groups_count: 0 }).execute();
  ({ db: counted, take } = countingStatements(store.db));
}, 60_000);
afterAll(() => store?.close());

const query = (q: Partial<ListQuery>): ListQuery => ({ projectId: project, removed: false, stored: null, limit: 100, desc: false, afterUs: null, beforeUs: null, ...q });
const sizes = (files: Array<{ size: number }>) => files.map((f) => f.size);

describe('file list reads', () => {
  it('runs each page as one statement and binds each call its own cursor and limit', async () => {
    const lists = new FileListRepo(counted);
    take();
    expect(sizes(await lists.list(query({})))).toEqual([1, 2, 4, 5, 7, 8, 10, 11]);
    expect(sizes(await lists.list(query({ afterUs: T0 + 4, limit: 3 })))).toEqual([5, 7, 8]);
    expect(sizes(await lists.list(query({ afterUs: T0 + 7, limit: 2 })))).toEqual([8, 10]);
    expect(sizes(await lists.list(query({ desc: true, afterUs: T0 + 8, limit: 2 })))).toEqual([7, 5]);
    expect(sizes(await lists.list(query({ beforeUs: T0 + 8, limit: 2 })))).toEqual([5, 7]); // walked back, shown in order
    expect(sizes(await lists.list(query({ stored: true })))).toEqual([2, 4, 8, 10]);
    expect(sizes(await lists.list(query({ removed: true, desc: true })))).toEqual([9, 6, 3, 0]);
    expect(sizes(await lists.list(query({ afterUs: T0 + 1, beforeUs: T0 + 8 })))).toEqual([2, 4, 5, 7]);
    expect(take()).toBe(8);
  });

  it('answers total and totals from one read of the counters', async () => {
    const lists = new FileListRepo(counted);
    take();
    const totals = { removed: 4, stored: 4, unstored: 4 };
    expect(await lists.countAndTotals({ projectId: project, removed: false, stored: null })).toEqual({ total: 8, totals });
    expect(await lists.countAndTotals({ projectId: project, removed: false, stored: false })).toEqual({ total: 4, totals });
    expect(await lists.countAndTotals({ projectId: project, removed: true, stored: null })).toEqual({ total: 4, totals });
    expect(take()).toBe(3);
    // A project nothing was counted in: zeros.
    expect(await lists.countAndTotals({ projectId: project + 1000, removed: false, stored: null })).toEqual({ total: 0, totals: { removed: 0, stored: 0, unstored: 0 } });
  });

  it('reads the counters of concurrent lists together on PostgreSQL', async () => {
    const lists = new FileListRepo(counted);
    take();
    const answers = await Promise.all(Array.from({ length: 20 }, () => lists.countAndTotals({ projectId: project, removed: false, stored: true })));
    for (const a of answers) expect(a.total).toBe(4);
    const n = take();
    if (usingPostgres()) expect(n).toBe(1);
    else expect(n).toBe(20); // SQLite reads in process, one statement each
  });

  it('reads a page with its total and totals, as list and countAndTotals answer them', async () => {
    const lists = new FileListRepo(counted);
    const queries = [
      query({}),
      query({ afterUs: T0 + 4, limit: 3 }),
      query({ desc: true, afterUs: T0 + 8, limit: 2 }),
      query({ beforeUs: T0 + 8, limit: 2 }),
      query({ stored: true }),
      query({ stored: false, desc: true }),
      query({ removed: true }),
      query({ removed: true, stored: true }),
      query({ afterUs: T0 + 1, beforeUs: T0 + 8 }),
      query({ afterUs: T0 + 11 }), // an empty page
      query({ projectId: project + 1000 }), // a project nothing was counted in
    ];
    for (const q of queries) {
      const alone = { records: await lists.list(q), ...(await lists.countAndTotals(q)) };
      take();
      expect(await lists.listWithTotals(q)).toEqual(alone);
      // One statement on PostgreSQL; the page, then the counters in process on SQLite (and the
      // count of removed files keeping a stored time, which the counters do not hold, on both).
      const extra = q.removed && q.stored !== null ? 1 : 0;
      expect(take()).toBe((usingPostgres() ? 1 : 2) + extra);
    }
  });

  it('reads concurrent pages of one shape and their counters in one statement on PostgreSQL', async () => {
    const lists = new FileListRepo(counted);
    const queries = Array.from({ length: 20 }, (_, i) => query({ projectId: i % 4 === 0 ? project + 1000 : project, afterUs: T0 + (i % 10), limit: 3 }));
    const alone = [];
    for (const q of queries) alone.push({ records: await lists.list(q), ...(await lists.countAndTotals(q)) });
    take();
    expect(await Promise.all(queries.map((q) => lists.listWithTotals(q)))).toEqual(alone);
    const n = take();
    if (usingPostgres()) expect(n).toBe(1);
    else expect(n).toBe(40); // SQLite reads in process: a page and the counters each
  });
});
