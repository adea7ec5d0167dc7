/**
 * PostgreSQL: a node that is its schema's only writer caches file rows (src/db/pg-alone.ts), and
 * stops before any other process's connection writes. SQLite has its own change stamp
 * (test/files/info-cache.test.ts); this suite is PostgreSQL's.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrations.js';
import { restClient } from '../helpers/rest.js';
import { newSchema, startServer, usingPostgres, type TestServer } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { storeWrite } from '../helpers/store-query.js';

const pgOnly = usingPostgres();
const URL = process.env['STOWAGE_DATABASE_URL'] ?? '';

async function until(what: string, check: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(!pgOnly)('two processes on one schema (db/connect.ts, pg-alone.ts)', () => {
  const opened: Db[] = [];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-pg-alone-'));
  const schema = newSchema();
  const open = async () => {
    const db = await openDb({ databaseUrl: URL, dataDir, ...(schema ? { schema } : {}), aloneTimings: { heartbeatMs: 100, retryMs: 200, leaseMs: 300, idleSessionTimeoutMs: 1000, joinTimeoutMs: 5000 } });
    opened.push(db);
    return db;
  };
  afterAll(async () => {
    for (const db of opened.splice(0)) await db.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('a node alone has a stamp; it gives it up before another process`s first statement runs', async () => {
    const first = await open();
    await migrate(first);
    await first.cacheWhileAlone!();
    await until('the first node alone', () => first.changeStamp() !== null);
    // Its own writes move its stamp; a statement that changed no row does not.
    await sql`create table if not exists alone_probe (n integer)`.execute(first.kysely);
    const before = first.changeStamp();
    await sql`update alone_probe set n = 2 where n = 1`.execute(first.kysely);
    expect(first.changeStamp()).toBe(before);
    await sql`insert into alone_probe (n) values (1)`.execute(first.kysely);
    const after = first.changeStamp();
    expect(after).not.toBe(before);
    await first.transaction(async (trx) => {
      await sql`update alone_probe set n = 2 where n = 1`.execute(trx);
    });
    expect(first.changeStamp()).not.toBe(after);

    const second = await open();
    await sql`select 1`.execute(second.kysely);
    // The second process's connection joined as a writer: the first stopped before it went on.
    expect(first.changeStamp()).toBeNull();
    // While the second is open the first never becomes alone again, however long it tries.
    await new Promise((r) => setTimeout(r, 500));
    expect(first.changeStamp()).toBeNull();

    await second.close();
    opened.splice(opened.indexOf(second), 1);
    await until('the first node alone again', () => first.changeStamp() !== null);
  });
});

describe.skipIf(!pgOnly)('a node alone on its schema serves file rows from its cache', () => {
  const srv = useServer();
  let uuid: string;

  const metric = async (server: TestServer, name: string): Promise<number> => {
    const text = await (await fetch(`${server.rest}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    if (line === undefined) throw new Error(`no ${name} in /metrics`);
    return Number(line.slice(name.length + 1));
  };
  const alone = async (server: TestServer) => (await metric(server, 'stowage_store_alone')) === 1;
  const info = async (server: TestServer) => {
    const r = await restClient(server.rest, srv.keys)('GET', `/files/${uuid}/`);
    expect(r.status).toBe(200);
    return r.json as Record<string, unknown>;
  };

  beforeAll(async () => {
    uuid = await srv.uploadFile('c.txt', 'cached');
  });

  it('repeated reads of a file need no query while the node is alone', async () => {
    await until('the node alone', () => alone(srv.server));
    await info(srv.server);
    const asked = await metric(srv.server, 'stowage_file_reads_batched_total');
    for (let i = 0; i < 10; i++) expect((await info(srv.server))['uuid']).toBe(uuid);
    // Any write of the node moves its stamp (a periodic sweep's job may land in between): each
    // read without the cache is one lookup, 10 here.
    expect(await metric(srv.server, 'stowage_file_reads_batched_total')).toBeLessThanOrEqual(asked + 2);
  });

  it('a write by another process is seen by the next read', async () => {
    await until('the node alone', () => alone(srv.server));
    await info(srv.server);
    await info(srv.server);
    expect(await storeWrite(srv.server, 'update files set metadata = ? where uuid = ?', ['{"from":"outside"}', uuid])).toBe(1);
    expect((await info(srv.server))['metadata']).toEqual({ from: 'outside' });
  });

  it('with a second node on the schema neither caches, and each sees the other`s writes at once', async () => {
    const a = srv.server;
    // A second node on the same schema, started and stopped inside the test.
    const b = await startServer({ ...(a.schema ? { schema: a.schema } : {}) });
    try {
      expect(await alone(a)).toBe(false);
      expect(await alone(b)).toBe(false);
      const callB = restClient(b.rest, srv.keys);
      for (let i = 0; i < 3; i++) {
        expect((await callB('PUT', `/files/${uuid}/metadata/round/`, { body: JSON.stringify(`b${i}`) })).status).toBeLessThan(300);
        expect(((await info(a))['metadata'] as Record<string, unknown>)['round']).toBe(`b${i}`);
      }
    } finally {
      await b.stop();
    }
    // Once the second node has gone, the first is alone again.
    await until('the node alone again', () => alone(a));
    expect(((await info(a))['metadata'] as Record<string, unknown>)['round']).toBe('b2');
  });
});
