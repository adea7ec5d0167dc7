/**
 * Two server processes on one PostgreSQL schema and one data dir: each event is delivered exactly
 * once, each expired file is expired by one sweep.
 *
 * PostgreSQL only: several processes on one SQLite file is not a supported deployment. SQLite
 * transactions start deferred, so two processes doing read-then-write (store, delete) fail with
 * SQLITE_BUSY instead of waiting; one process per SQLite file is the rule.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, usingPostgres, type ProjectKeys, type TestServer } from '../helpers/server.js';
import { restClient, uploadBase } from '../helpers/rest.js';
import { eventually, sleep, startReceiver, type Received, type Receiver } from './receiver.js';

const form = (fields: Record<string, string>) => ({ body: new URLSearchParams(fields).toString(), contentType: 'application/x-www-form-urlencoded' });
const ENV = {
  STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8',
  STOWAGE_UNSTORED_TTL_MS: '2000',
  STOWAGE_EXPIRY_SWEEP_MS: '300',
  STOWAGE_JOB_POLL_MS: '50',
};

let a: TestServer;
let b: TestServer;
let keys: ProjectKeys;
let receiver: Receiver;

const pgOnly = usingPostgres();

// useServer() does not fit: two nodes share one data dir and schema.
beforeAll(async () => {
  if (!pgOnly) return;
  receiver = await startReceiver();
  a = await startServer({ env: ENV });
  b = await startServer({ env: ENV, dataDir: a.dataDir, ...(a.schema ? { schema: a.schema } : {}) });
  keys = await a.createProject();
  const call = restClient(a.rest, keys);
  for (const event of ['file.uploaded', 'file.stored', 'file.deleted', 'file.info_updated']) {
    expect((await call('POST', '/webhooks/', form({ target_url: receiver.url, event }))).status).toBe(201);
  }
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await receiver?.close();
});

const keyOf = (r: Received) => `${r.json.hook.event}:${r.json.data.uuid}:${JSON.stringify(r.json.previous_values ?? null)}`;

describe.skipIf(!pgOnly)('two nodes, one PostgreSQL store', () => {
  it('deliver each event exactly once', async () => {
    const nodes = [a, b];
    const expected = new Set<string>();
    const uploads = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const node = nodes[i % 2]!;
        const r = await uploadBase(node.upload, keys.public_key, [{ name: `f${i}.txt`, data: `file ${i}` }], { UPLOADCARE_STORE: '1' });
        expect(r.status).toBe(200);
        return r.json.file as string;
      }),
    );
    for (const uuid of uploads) {
      expected.add(`file.uploaded:${uuid}:null`);
      expected.add(`file.stored:${uuid}:null`);
    }
    // Changes through the other node than the one that took the upload.
    for (const [i, uuid] of uploads.entries()) {
      const call = restClient(nodes[(i + 1) % 2]!.rest, keys);
      if (i % 3 === 0) {
        expect((await call('DELETE', `/files/${uuid}/storage/`)).status).toBe(200);
        expected.add(`file.deleted:${uuid}:null`);
      } else {
        expect((await call('PUT', `/files/${uuid}/metadata/n/`, { body: JSON.stringify(String(i)) })).status).toBe(201);
        expected.add(`file.info_updated:${uuid}:${JSON.stringify({ metadata: { n: null } })}`);
      }
    }
    await receiver.waitFor(expected.size, 30_000);
    await sleep(2000); // let any duplicate show up before counting
    const counts = new Map<string, number>();
    for (const r of receiver.received) counts.set(keyOf(r), (counts.get(keyOf(r)) ?? 0) + 1);
    expect(new Set(counts.keys())).toEqual(expected);
    expect([...counts.entries()].filter(([, n]) => n !== 1)).toEqual([]);
  });

  it('run each expiry once (and expiry sends no file.deleted)', async () => {
    const nodes = [a, b];
    const before = receiver.received.length;
    const uuids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await uploadBase(nodes[i % 2]!.upload, keys.public_key, [{ name: `tmp${i}.txt`, data: `tmp ${i}` }], { UPLOADCARE_STORE: '0' });
      uuids.push(r.json.file as string);
    }
    const call = restClient(a.rest, keys);
    for (const uuid of uuids) {
      await eventually(async () => (await call('GET', `/files/${uuid}/`)).json.datetime_removed !== null, 20_000, `expiry of ${uuid}`);
    }
    await sleep(1500);
    // Every expiry leaves one trace in the shared store: the job reclaiming the file's bytes,
    // enqueued in the expiring transaction. A file expired twice would have two.
    const pgc = new pg.Client({ connectionString: process.env['STOWAGE_DATABASE_URL'], options: `-c search_path=${a.schema}` });
    await pgc.connect();
    try {
      for (const uuid of uuids) {
        const { rows } = await pgc.query("SELECT id FROM jobs WHERE kind = 'blob.delete' AND payload LIKE $1", [`%${uuid}%`]);
        expect(rows, uuid).toHaveLength(1);
      }
      // And no sweep job was ever claimed twice.
      const sweeps = await pgc.query("SELECT attempts, state FROM jobs WHERE kind = 'files.expire'");
      expect(sweeps.rows.length).toBeGreaterThan(3);
      expect(sweeps.rows.filter((r: { attempts: number; state: string }) => r.state === 'done' && r.attempts !== 1)).toEqual([]);
    } finally {
      await pgc.end();
    }
    const after = receiver.received.slice(before);
    expect(after.filter((r) => r.json.hook.event === 'file.deleted')).toEqual([]);
    expect(after.filter((r) => r.json.hook.event === 'file.uploaded').map((r) => r.json.data.uuid).sort()).toEqual([...uuids].sort());
  });
});
