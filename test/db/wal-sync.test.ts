/**
 * SQLite commits are durable before the answer, and the disk sync that makes them so runs off the
 * event loop (src/db/wal-sync.ts). Watched from outside with strace on the running server: which
 * thread syncs the write-ahead log, and whether that sync finished before the answer was written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveStrace, traced } from '../helpers/strace.js';
import { startServer, usingPostgres, type ProjectKeys, type TestServer } from '../helpers/server.js';
import { restClient, uploadBase } from '../helpers/rest.js';


let server: TestServer;
let keys: ProjectKeys;

/** The server's syncs and writes, with file names for descriptors (`-y`). */
const tracedSyncs = (pid: number, work: () => Promise<void>) => traced(pid, ['-y', '-s', '32', '-e', 'trace=fsync,fdatasync,write,writev'], work);

/** The thread id a trace line belongs to (strace -f prefixes each line with it). */
const tid = (line: string) => Number(/^(\d+)/.exec(line)?.[1]);
/** Lines where a sync of the SQLite WAL finished. */
const walSyncsDone = (lines: string[]) => lines.flatMap((l, i) => (/(fsync|fdatasync)\(\d+<[^>]*stowage\.sqlite-wal>\)\s*=\s*0/.test(l) ? [i] : []));

describe.skipIf(usingPostgres() || !haveStrace)('SQLite commits: durable before the answer, synced off the event loop', () => {
  // useServer() does not fit: the suite is about SQLite's WAL and must start no server at all on
  // PostgreSQL, where it is skipped.
  beforeAll(async () => {
    server = await startServer();
    keys = await server.createProject();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('an upload: the WAL is synced by a thread-pool thread, and before the 200 is written', async () => {
    const pid = server.child.pid as number;
    const lines = await tracedSyncs(pid, async () => {
      const up = await uploadBase(server.upload, keys.public_key, [{ name: 'durable.txt', data: 'bytes that must survive a power cut' }]);
      expect(up.status).toBe(200);
    });
    const syncs = walSyncsDone(lines);
    expect(syncs.length).toBeGreaterThan(0);
    // Never on the main thread (its thread id is the process id): the event loop does not wait for the disk.
    const walSyncCalls = lines.filter((l) => /(fsync|fdatasync)\(\d+<[^>]*stowage\.sqlite-wal>/.test(l));
    expect(walSyncCalls.map(tid).filter((t) => t === pid)).toEqual([]);
    const answer = lines.findIndex((l) => tid(l) === pid && /write(v)?\(\d+<(TCP|socket)[^>]*>.*HTTP\/1\.1 200/.test(l));
    expect(answer).toBeGreaterThan(-1);
    expect(syncs[0]).toBeLessThan(answer);
  });

  it('a REST write (metadata): its commit is synced before the answer too', async () => {
    const uuid = (await uploadBase(server.upload, keys.public_key, [{ name: 'm.txt', data: 'm' }])).json.file as string;
    const rest = restClient(server.rest, keys);
    const pid = server.child.pid as number;
    const lines = await tracedSyncs(pid, async () => {
      const put = await rest('PUT', `/files/${uuid}/metadata/colour/`, { body: JSON.stringify('blue') });
      expect(put.status).toBe(201);
    });
    const syncs = walSyncsDone(lines);
    const answer = lines.findIndex((l) => tid(l) === pid && /write(v)?\(\d+<(TCP|socket)[^>]*>.*HTTP\/1\.1 201/.test(l));
    expect(syncs.length).toBeGreaterThan(0);
    expect(answer).toBeGreaterThan(-1);
    expect(syncs[0]).toBeLessThan(answer);
  });
});
