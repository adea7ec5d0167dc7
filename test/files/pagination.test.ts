import { beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { uploadBase } from '../helpers/rest.js';

const FILES = 10_000;
const srv = useServer();
const uploaded = new Set<string>();

async function uploadBatch(n: number, into?: Set<string>): Promise<void> {
  const files = Array.from({ length: n }, (_, i) => ({ field: `f${i}`, name: `f${i}.txt`, data: `${i}` }));
  const r = await uploadBase(srv.upload, srv.keys.public_key, files, { UPLOADCARE_STORE: '1' });
  expect(r.status).toBe(200);
  for (const uuid of Object.values(r.json as Record<string, string>)) (into ?? uploaded).add(uuid);
}

/** Follows `next` (or `previous`) links from `first`, returning every uuid in page order. */
async function walk(first: string, link: 'next' | 'previous', dropOffset = false): Promise<{ uuids: string[]; pages: number }> {
  const uuids: string[] = [];
  let url: string | null = first.startsWith('http') ? first : srv.rest + first;
  let pages = 0;
  while (url) {
    const u = new URL(url);
    if (dropOffset) {
      // The JS SDK's paginator re-sends only from/limit/ordering/stored/removed.
      u.searchParams.delete('offset');
      u.searchParams.delete('to');
    }
    const r = await srv.call('GET', u.pathname + u.search);
    expect(r.status).toBe(200);
    const page = r.json.results.map((f: { uuid: string }) => f.uuid) as string[];
    uuids.push(...(link === 'previous' ? page.reverse() : page));
    url = r.json[link];
    pages++;
    if (pages > 100) throw new Error('pagination does not end');
  }
  return { uuids, pages };
}

beforeAll(async () => {
  // 100 requests of 100 files, four at a time.
  for (let i = 0; i < FILES / 400; i++) await Promise.all([uploadBatch(100), uploadBatch(100), uploadBatch(100), uploadBatch(100)]);
}, 600_000);

describe('pagination over 10 000 files', () => {
  it('walks forward with next links: no duplicate, no gap, in order, also while uploads continue', async () => {
    const extra = new Set<string>();
    let uploading = true;
    const background = (async () => {
      while (uploading) await uploadBatch(20, extra);
    })();
    let result: Awaited<ReturnType<typeof walk>>;
    try {
      result = await walk('/files/?limit=1000', 'next');
    } finally {
      uploading = false;
      await background;
    }
    const { uuids, pages } = result;
    expect(new Set(uuids).size).toBe(uuids.length);
    const seen = new Set(uuids);
    for (const uuid of uploaded) expect(seen.has(uuid)).toBe(true);
    // Whatever was seen beyond the original set was uploaded during the walk.
    for (const uuid of uuids) expect(uploaded.has(uuid) || extra.has(uuid)).toBe(true);
    expect(pages).toBeGreaterThanOrEqual(10);
    expect(extra.size).toBeGreaterThan(0);
  });

  it('walks with only `from` carried (as the JS SDK does) and descending', async () => {
    const asc = await walk('/files/?limit=700', 'next', true);
    expect(new Set(asc.uuids).size).toBe(asc.uuids.length);
    const seenAsc = new Set(asc.uuids);
    for (const uuid of uploaded) expect(seenAsc.has(uuid)).toBe(true);
    const desc = await walk('/files/?limit=999&ordering=-datetime_uploaded', 'next');
    expect(desc.uuids).toEqual([...asc.uuids].reverse());
  });

  it('walks backwards with previous links to the first page', async () => {
    const forward = await walk('/files/?limit=1000', 'next');
    // Start from the last page and walk back.
    const lastPage = await srv.call('GET', '/files/?limit=1000&ordering=-datetime_uploaded&limit=1');
    expect(lastPage.json.results).toHaveLength(1);
    let url: string | null = `${srv.rest}/files/?limit=1000`;
    let lastUrl = url;
    while (url) {
      const u: URL = new URL(url);
      const r = await srv.call('GET', u.pathname + u.search);
      lastUrl = url;
      url = r.json.next;
    }
    const back = await walk(new URL(lastUrl).pathname + new URL(lastUrl).search, 'previous');
    expect(back.uuids.reverse()).toEqual(forward.uuids);
  });
});
