/** Two processes on one SQLite file (a second node, or admin commands beside a server). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, usingPostgres, type ProjectKeys, type TestServer } from '../helpers/server.js';
import { restClient, uploadBase } from '../helpers/rest.js';

let a: TestServer;
let b: TestServer;
let keys: ProjectKeys;

describe.skipIf(usingPostgres())('two processes on one SQLite file', () => {
  // useServer() does not fit: two server processes share one data dir.
  beforeAll(async () => {
    a = await startServer();
    b = await startServer({ dataDir: a.dataDir });
    keys = await a.createProject();
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
  });

  it('concurrent read-then-write transactions wait for each other instead of failing', async () => {
    const uuid = (await uploadBase(a.upload, keys.public_key, [{ name: 'x.txt', data: 'x' }])).json.file;
    const ca = restClient(a.rest, keys);
    const cb = restClient(b.rest, keys);
    const writes = Array.from({ length: 40 }, (_, i) =>
      (i % 2 ? ca : cb)('PUT', `/files/${uuid}/metadata/k${i}/`, { body: JSON.stringify(`v${i}`) }),
    );
    const statuses = (await Promise.all(writes)).map((r) => r.status);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    const meta = (await ca('GET', `/files/${uuid}/metadata/`)).json;
    expect(Object.keys(meta)).toHaveLength(40);
  });
});
