/**
 * The file list over HTTP (src/files/list/): on PostgreSQL an untagged page and its project's
 * counters are one statement, shared by the pages asked for together (list/batched/repo.ts), and on
 * both stores a file read again unchanged is rendered once (list/record-versions.ts). Here, on both
 * stores: a burst of concurrent lists over two projects, pages and cursors answers each request with
 * exactly the bytes it gets alone; on PostgreSQL the node's counts show the burst's pages took fewer
 * statements than pages; and every write (a new file, store, metadata, tags, delete) is in the next
 * list's answer and its totals, while other lists keep batches going.
 */
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { usingPostgres } from '../helpers/server.js';
import type { RestCall } from '../helpers/rest.js';

const srv = useServer();

async function metric(series: string): Promise<number> {
  const text = await (await fetch(`${srv.rest}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

async function uploadTo(pubKey: string, name: string, store: boolean): Promise<string> {
  const form = new FormData();
  form.append('UPLOADCARE_PUB_KEY', pubKey);
  form.append('UPLOADCARE_STORE', store ? '1' : '0');
  form.append('file', new Blob([name]), name);
  const r = await fetch(`${srv.upload}/base/`, { method: 'POST', body: form });
  expect(r.status).toBe(200);
  return ((await r.json()) as { file: string }).file;
}

/** A list answer's body as text, expecting 200. */
async function listText(call: RestCall, path: string): Promise<string> {
  const r = await call('GET', path);
  expect(r.status, r.text).toBe(200);
  return r.text;
}

describe('file list pages, read together on PostgreSQL', () => {
  it('answers a concurrent burst over two projects with the bytes each request gets alone', async () => {
    const other = await srv.newProject();
    for (let i = 0; i < 9; i++) {
      await uploadTo(srv.keys.public_key, `mine-${i}.txt`, i % 2 === 0);
      await uploadTo(other.keys.public_key, `theirs-${i}.txt`, i % 3 === 0);
    }
    const cursor = new URL((await srv.call('GET', '/files/?limit=3')).json.next as string).searchParams.get('from')!;
    const paths = [
      '/files/',
      '/files/?limit=3',
      '/files/?limit=3&stored=true',
      '/files/?stored=false&ordering=-datetime_uploaded',
      `/files/?from=${encodeURIComponent(cursor)}&limit=2`,
      `/files/?to=${encodeURIComponent(cursor)}&limit=2`,
      '/files/?removed=true',
    ];
    const reads = [...paths.map((path) => ({ call: srv.call, path })), ...paths.slice(0, 4).map((path) => ({ call: other.call, path }))];
    const alone: string[] = [];
    for (const { call, path } of reads) alone.push(await listText(call, path));

    const askedBefore = await metric('stowage_file_list_pages_batched_total');
    const batchesBefore = await metric('stowage_file_list_page_batches_total');
    // Several bursts: a burst whose requests happen to arrive one by one is not batched.
    for (let burst = 0; burst < 5; burst++) {
      const together = await Promise.all([...reads, ...reads].map(({ call, path }) => listText(call, path)));
      expect(together).toEqual([...alone, ...alone]);
    }
    const asked = (await metric('stowage_file_list_pages_batched_total')) - askedBefore;
    const batches = (await metric('stowage_file_list_page_batches_total')) - batchesBefore;
    if (usingPostgres()) {
      expect(asked).toBe(5 * 2 * reads.length);
      expect(batches).toBeGreaterThan(0);
      expect(batches).toBeLessThan(asked);
    } else {
      expect([asked, batches]).toEqual([0, 0]); // SQLite reads in process, unbatched
    }
  });

  it('shows every write in the next list, with its totals', async () => {
    const { call, keys } = await srv.newProject();
    const list = async () => (await call('GET', '/files/?limit=100')).json as Page;
    const only = async () => {
      const page = await list();
      expect(page.results).toHaveLength(1);
      return { ...page, file: page.results[0]! };
    };
    await whileListing(call, async () => {
      const uuid = await uploadTo(keys.public_key, 'late.txt', false);
      let seen = await only();
      expect([seen.file.uuid, seen.file.datetime_stored, seen.total, seen.totals]).toEqual([uuid, null, 1, { removed: 0, stored: 0, unstored: 1 }]);

      expect((await call('PUT', `/files/${uuid}/storage/`)).status).toBe(200);
      seen = await only();
      expect(seen.file.datetime_stored).not.toBeNull();
      expect(seen.totals).toEqual({ removed: 0, stored: 1, unstored: 0 });

      // Changes of the same file's row: a list must not answer with the file as rendered before.
      expect((await call('PUT', `/files/${uuid}/metadata/kind/`, { body: JSON.stringify('first') })).status).toBe(201); // a new key
      expect((await only()).file.metadata).toEqual({ kind: 'first' });
      expect((await call('PUT', `/files/${uuid}/metadata/kind/`, { body: JSON.stringify('second') })).status).toBe(200);
      expect((await only()).file.metadata).toEqual({ kind: 'second' });
      expect((await call('PUT', `/files/${uuid}/tags/`, { body: JSON.stringify({ tags: ['blue'] }) })).status).toBe(200);
      expect((await only()).file.tags).toEqual(['blue']);

      expect((await call('DELETE', `/files/${uuid}/storage/`)).status).toBe(200);
      const after = await list();
      expect([after.results, after.total, after.totals]).toEqual([[], 0, { removed: 1, stored: 0, unstored: 0 }]);
      const removed = (await call('GET', '/files/?removed=true')).json as Page;
      expect(removed.results.map((f) => f.uuid)).toEqual([uuid]);
      expect(removed.results[0]!.datetime_removed).not.toBeNull();
    });
  });
});

type Page = { total: number; totals: Record<string, number>; results: Array<Record<string, unknown>> };

/** Runs `fn` while concurrent reads of the same list keep batches going (and its files' records rendered). */
async function whileListing(call: RestCall, fn: () => Promise<void>): Promise<void> {
  let writing = true;
  const noise = (async () => {
    for (let n = 0; writing && n < 2000; n++) await Promise.all(Array.from({ length: 4 }, () => call('GET', '/files/?limit=100')));
  })();
  try {
    await fn();
  } finally {
    writing = false;
    await noise;
  }
}
