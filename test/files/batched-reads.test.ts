/**
 * File lookups by uuid that arrive together (REST file info, the CDN's lookup) are answered from
 * one batched query on PostgreSQL (src/files/repo.ts, src/db/read-batcher.ts). On both
 * stores: a burst of concurrent reads over two projects answers each request with its own file,
 * another project's file and an unknown uuid are 404 (the project check holds inside a batch), the
 * CDN serves the same bytes, and a read made right after a write sees it. On PostgreSQL the
 * node's counts show the burst took fewer queries than it had lookups. The node's row cache while
 * it is the schema's only writer (db/pg-alone.ts) is off here: it would answer the repeated reads
 * without a lookup, and a node with other writers beside it reads through the batch.
 */
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { usingPostgres } from '../helpers/server.js';
import type { RestCall } from '../helpers/rest.js';

const srv = useServer({ env: { STOWAGE_PG_ROW_CACHE: '0' } });
const FILES_PER_PROJECT = 12;

async function metric(series: string): Promise<number> {
  const text = await (await fetch(`${srv.rest}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

async function uploadMany(upload: (name: string, data: string) => Promise<string>, tag: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (let i = 0; i < FILES_PER_PROJECT; i++) {
    const data = `${tag}-${i}`;
    files.set(await upload(`${data}.txt`, data), data);
  }
  return files;
}

/** Every file read at once through its own project's client: each answer is its own file. */
async function readAll(reads: Array<{ call: RestCall; uuid: string }>): Promise<void> {
  const answers = await Promise.all(reads.map(({ call, uuid }) => call('GET', `/files/${uuid}/`)));
  answers.forEach((r, i) => {
    expect(r.status, r.text).toBe(200);
    expect(r.json.uuid).toBe(reads[i]!.uuid);
  });
}

describe('file lookups by uuid, batched on PostgreSQL', () => {
  it('answers a burst over two projects each with its own file; other projects and unknown uuids are 404', async () => {
    const other = await srv.newProject();
    const mine = await uploadMany((n, d) => srv.uploadFile(n, d), 'mine');
    const theirs = await uploadMany(async (n, d) => {
      const form = new FormData();
      form.append('UPLOADCARE_PUB_KEY', other.keys.public_key);
      form.append('UPLOADCARE_STORE', '1');
      form.append('file', new Blob([d]), n);
      const r = await fetch(`${srv.upload}/base/`, { method: 'POST', body: form });
      expect(r.status).toBe(200);
      return ((await r.json()) as { file: string }).file;
    }, 'theirs');
    const reads = [...[...mine.keys()].map((uuid) => ({ call: srv.call, uuid })), ...[...theirs.keys()].map((uuid) => ({ call: other.call, uuid }))];

    const askedBefore = await metric('stowage_file_reads_batched_total');
    const batchesBefore = await metric('stowage_file_read_batches_total');
    // Several bursts: a burst whose requests happen to arrive one by one is not batched.
    for (let burst = 0; burst < 5; burst++) await readAll([...reads, ...reads]);
    const asked = (await metric('stowage_file_reads_batched_total')) - askedBefore;
    const batches = (await metric('stowage_file_read_batches_total')) - batchesBefore;
    if (usingPostgres()) {
      expect(asked).toBeGreaterThanOrEqual(5 * 2 * reads.length);
      expect(batches).toBeGreaterThan(0);
      expect(batches).toBeLessThan(asked);
    } else {
      expect([asked, batches]).toEqual([0, 0]); // SQLite reads in process, unbatched
    }

    // Crossed projects and unknown uuids, in one burst with good reads.
    const crossed = await Promise.all([
      ...[...theirs.keys()].map((uuid) => srv.call('GET', `/files/${uuid}/`)),
      ...[...mine.keys()].map((uuid) => other.call('GET', `/files/${uuid}/`)),
      srv.call('GET', '/files/00000000-0000-4000-8000-000000000000/'),
      ...[...mine.keys()].map((uuid) => srv.call('GET', `/files/${uuid}/`)),
    ]);
    expect(crossed.map((r) => r.status)).toEqual([...Array(2 * FILES_PER_PROJECT + 1).fill(404), ...Array(FILES_PER_PROJECT).fill(200)]);

    // The CDN's lookup by uuid, in a burst too.
    const all = new Map([...mine, ...theirs]);
    const served = await Promise.all([...all.keys()].map(async (uuid) => [uuid, await (await fetch(`${srv.cdn}/${uuid}/`)).text()] as const));
    for (const [uuid, body] of served) expect(body).toBe(all.get(uuid));
  });

  it('sees a write made just before the read', async () => {
    const uuid = await srv.uploadFile('late.txt', 'late', { store: false });
    const before = await srv.call('GET', `/files/${uuid}/`);
    expect(before.json.datetime_stored).toBeNull();
    // Concurrent reads of the same file keep batches going while the write and the next read happen.
    const noise = Promise.all(Array.from({ length: 20 }, () => srv.call('GET', `/files/${uuid}/`)));
    expect((await srv.call('PUT', `/files/${uuid}/storage/`)).status).toBe(200);
    expect((await srv.call('GET', `/files/${uuid}/`)).json.datetime_stored).not.toBeNull();
    expect((await srv.call('DELETE', `/files/${uuid}/storage/`)).status).toBe(200);
    expect((await srv.call('GET', `/files/${uuid}/`)).json.datetime_removed).not.toBeNull();
    for (const r of await noise) expect(r.status).toBe(200);
  });
});
