/**
 * The list totals come from per-project counters (migration 0018, src/db/project-counters.ts),
 * moved in the transaction of each change. After a mix of uploads (one request, concurrent ones, a
 * copy), single and batch stores and deletes (with no-op members), group creations and deletions
 * and the expiry sweep, in two projects, the counters must equal a COUNT(*) of the rows, and the
 * list answers (`total` per filter, `totals`, the group list's `total`) must equal those counts.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/db/connect.js';
import { uploadBase } from '../helpers/rest.js';
import type { RestCall } from '../helpers/rest.js';
import { useServer } from '../helpers/use-server.js';
import { makeGroup } from '../groups/helpers.js';

// Unstored files live 20 s here instead of 24 h; a sweep runs every 300 ms. The first checks must
// end before the sweep starts removing (with 8 s, a loaded machine saw one \`stored=false\` total
// taken after a removal that the real count before it had not seen).
const srv = useServer({ env: { STOWAGE_UNSTORED_TTL_MS: '20000', STOWAGE_EXPIRY_SWEEP_MS: '300' } });

let db: Db;
beforeAll(async () => {
  // The server's own store, read beside it: the real counts the counters must match.
  db = await openDb({ databaseUrl: process.env['STOWAGE_DATABASE_URL'] ?? '', dataDir: srv.server.dataDir, ...(srv.server.schema ? { schema: srv.server.schema } : {}) });
});
afterAll(async () => {
  await db?.close();
});

interface Counts {
  removed: number;
  stored: number;
  unstored: number;
  groups: number;
}

async function realCounts(projectId: number): Promise<Counts> {
  const r = await sql<{ removed: number | string; stored: number | string; unstored: number | string; groups: number | string }>`select
      (select count(*) from files where project_id = ${projectId} and removed_us is not null) as removed,
      (select count(*) from files where project_id = ${projectId} and removed_us is null and stored_us is not null) as stored,
      (select count(*) from files where project_id = ${projectId} and removed_us is null and stored_us is null) as unstored,
      (select count(*) from file_groups where project_id = ${projectId}) as groups`.execute(db.kysely);
  const row = r.rows[0]!;
  return { removed: Number(row.removed), stored: Number(row.stored), unstored: Number(row.unstored), groups: Number(row.groups) };
}

async function counters(projectId: number): Promise<Counts> {
  const r = await db.kysely.selectFrom('project_counters').selectAll().where('project_id', '=', projectId).executeTakeFirst();
  return { removed: Number(r?.removed_files ?? 0), stored: Number(r?.stored_files ?? 0), unstored: Number(r?.unstored_files ?? 0), groups: Number(r?.groups_count ?? 0) };
}

async function projectIdOf(pubKey: string): Promise<number> {
  return Number((await db.kysely.selectFrom('projects').select('id').where('pub_key', '=', pubKey).executeTakeFirstOrThrow()).id);
}

/** The list answers of a project, checked against the real counts. */
async function expectListsMatch(call: RestCall, real: Counts): Promise<void> {
  const files = async (query: string) => {
    const r = await call('GET', `/files/?limit=1${query}`);
    expect(r.status, r.text).toBe(200);
    return r.json as { total: number; totals: { removed: number; stored: number; unstored: number } };
  };
  const all = await files('');
  expect(all.totals).toEqual({ removed: real.removed, stored: real.stored, unstored: real.unstored });
  expect(all.total).toBe(real.stored + real.unstored);
  expect((await files('&stored=true')).total).toBe(real.stored);
  expect((await files('&stored=false')).total).toBe(real.unstored);
  expect((await files('&removed=true')).total).toBe(real.removed);
  // Removed files by stored time: counted, not in the counters (removing clears stored_us here).
  expect((await files('&removed=true&stored=false')).total).toBe(real.removed);
  expect((await files('&removed=true&stored=true')).total).toBe(0);
  const groups = await call('GET', '/groups/?limit=1');
  expect(groups.status, groups.text).toBe(200);
  expect(groups.json.total).toBe(real.groups);
}

async function until(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('list counters', () => {
  it('agree with a real count after uploads, stores, deletes, groups and the sweep, in two projects', async () => {
    const other = await srv.newProject();
    const projects = [
      { pub: srv.keys.public_key, call: srv.call },
      { pub: other.keys.public_key, call: other.call },
    ];
    const upload = async (pub: string, store: '0' | '1', n: number) => {
      const r = await uploadBase(srv.upload, pub, Array.from({ length: n }, (_, i) => ({ field: `f${i}`, name: `f${i}.txt`, data: `file ${i} ${Math.random()}` })), { UPLOADCARE_STORE: store });
      expect(r.status, r.text).toBe(200);
      return Object.values(r.json as Record<string, string>);
    };
    for (const { pub, call } of projects) {
      const stored = await upload(pub, '1', 6);
      const unstored = await upload(pub, '0', 5);
      // Concurrent uploads and stores: the counter moves add up on both databases.
      const more = (await Promise.all([upload(pub, '1', 2), upload(pub, '0', 2), upload(pub, '1', 1), upload(pub, '0', 1)])).flat();
      const copy = await call('POST', '/files/local_copy/', { body: JSON.stringify({ source: stored[0], store: false }) });
      expect(copy.status, copy.text).toBe(201);
      expect((await call('PUT', `/files/${unstored[0]}/storage/`)).status).toBe(200);
      // Storing a stored file moves nothing; a missing uuid is a problem, not a move.
      const batchStore = await call('PUT', '/files/storage/', { body: JSON.stringify([unstored[1], stored[1], '00000000-0000-4000-8000-000000000000']) });
      expect(batchStore.status, batchStore.text).toBe(200);
      expect((await call('DELETE', `/files/${stored[2]}/storage/`)).status).toBe(200);
      // Removing again moves nothing.
      expect((await call('DELETE', `/files/${stored[2]}/storage/`)).status).toBe(200);
      const batchDelete = await call('DELETE', '/files/storage/', { body: JSON.stringify([stored[3], unstored[2], stored[2]]) });
      expect(batchDelete.status, batchDelete.text).toBe(200);
      await Promise.all([call('PUT', `/files/${more[2]}/storage/`), call('DELETE', `/files/${more[0]}/storage/`), call('PUT', `/files/${more[3]}/storage/`)]);
      const groups = await Promise.all([makeGroup(srv.server, { public_key: pub, secret_key: '' }, [stored[4]!]), makeGroup(srv.server, { public_key: pub, secret_key: '' }, [stored[4]!, stored[5]!])]);
      await makeGroup(srv.server, { public_key: pub, secret_key: '' }, [stored[5]!]);
      // Two deletes of one group at once: one 204, one 404, one counter move.
      const deletes = await Promise.all([call('DELETE', `/groups/${groups[0]}/`), call('DELETE', `/groups/${groups[0]}/`)]);
      expect(deletes.map((r) => r.status).sort()).toEqual([204, 404]);
      expect((await call('DELETE', `/groups/${groups[0]}/`)).status).toBe(404);
    }
    for (const { pub, call } of projects) {
      const id = await projectIdOf(pub);
      const real = await realCounts(id);
      expect(await counters(id)).toEqual(real);
      await expectListsMatch(call, real);
    }
    // The sweep removes what stayed unstored past the TTL.
    for (const { pub, call } of projects) {
      const id = await projectIdOf(pub);
      await until(async () => (await realCounts(id)).unstored === 0, 40_000);
      const real = await realCounts(id);
      expect(real).toMatchObject({ stored: 10, unstored: 0, groups: 2 });
      expect(await counters(id)).toEqual(real);
      await expectListsMatch(call, real);
    }
  }, 90_000);
});
