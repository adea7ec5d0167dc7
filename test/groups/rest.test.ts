/** REST groups: cursor pagination like /files/, detail with null for removed files, delete (wire-reference §2.4, §2.8). */
import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { restClient } from '../helpers/rest.js';
import { makeGroup, upload } from './helpers.js';

const srv = useServer();
const created: string[] = [];
let fileA: string;

beforeAll(async () => {
  fileA = await upload(srv.server, srv.keys, 'a.txt', 'aaa');
  for (let i = 0; i < 5; i++) created.push(await makeGroup(srv.server, srv.keys, Array.from({ length: i + 1 }, () => fileA)));
});

/** Follows `next` links (path part only) and returns the ids in order. */
async function walk(first: string, link: 'next' | 'previous' = 'next'): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let url: string | null = first;
  let pages = 0;
  while (url) {
    const r = await srv.call('GET', url);
    expect(r.status, r.text).toBe(200);
    ids.push(...r.json.results.map((g: { id: string }) => g.id));
    url = r.json[link] ? (r.json[link] as string).slice(srv.rest.length) : null;
    if (++pages > 20) throw new Error('pagination does not end');
  }
  return { ids, pages };
}

describe('GET /groups/', () => {
  it('lists groups with the exact keys and totals', async () => {
    const r = await srv.call('GET', '/groups/');
    expect(r.status).toBe(200);
    expect(Object.keys(r.json)).toEqual(['next', 'previous', 'total', 'per_page', 'results']);
    expect(r.json).toMatchObject({ next: null, previous: null, total: 5, per_page: 100 });
    expect(r.json.results.map((g: { id: string }) => g.id)).toEqual(created);
    expect(Object.keys(r.json.results[0])).toEqual(['id', 'datetime_created', 'datetime_stored', 'files_count', 'cdn_url', 'url']);
    expect(r.json.results[2]).toMatchObject({ id: created[2], files_count: 3, datetime_stored: null, url: `${srv.rest}/groups/${created[2]}/`, cdn_url: `${srv.cdn}/${created[2]}/` });
  });

  it('walks pages forward and back without gaps or duplicates, in both orderings', async () => {
    const asc = await walk('/groups/?limit=2');
    expect(asc).toEqual({ ids: created, pages: 3 });
    const desc = await walk('/groups/?limit=2&ordering=-datetime_created');
    expect(desc.ids).toEqual([...created].reverse());
    const page2 = await srv.call('GET', '/groups/?limit=2');
    const second = await srv.call('GET', page2.json.next.slice(srv.rest.length));
    expect(second.json.next).toContain('from=');
    expect(second.json.next).toContain('offset=0');
    expect(second.json.previous).toContain('to=');
    const back = await srv.call('GET', second.json.previous.slice(srv.rest.length));
    expect(back.json.results.map((g: { id: string }) => g.id)).toEqual(created.slice(0, 2));
    expect(back.json.previous).toBeNull();
  });

  it('pages with `from` alone, as the JS paginator re-sends it', async () => {
    const first = await srv.call('GET', '/groups/?limit=3');
    const from = new URL(first.json.next).searchParams.get('from') as string;
    const next = await srv.call('GET', `/groups/?limit=3&from=${encodeURIComponent(from)}`);
    expect(next.json.results.map((g: { id: string }) => g.id)).toEqual(created.slice(3));
  });

  it('rejects bad limit, ordering and from values and counts only its own project', async () => {
    for (const q of ['limit=0', 'limit=1001', 'limit=x', 'ordering=size', 'from=yesterday']) expect((await srv.call('GET', `/groups/?${q}`)).status).toBe(400);
    const other = restClient(srv.rest, await srv.server.createProject());
    expect((await other('GET', '/groups/')).json).toMatchObject({ total: 0, results: [] });
  });
});

describe('GET and DELETE /groups/{id}/', () => {
  it('returns REST file objects with default_effects, and null in place of a removed file', async () => {
    const b = await upload(srv.server, srv.keys, 'b.txt', 'bbbb');
    const c = await upload(srv.server, srv.keys, 'c.txt', 'cc');
    const id = await makeGroup(srv.server, srv.keys, [b, `${c}/-/resize/10x/`, b]);
    const r = await srv.call('GET', `/groups/${id}/`);
    expect(r.status).toBe(200);
    expect(r.json.files).toHaveLength(3);
    expect(r.json.files[1]).toMatchObject({ uuid: c, size: 2, default_effects: 'resize/10x/', url: `${srv.rest}/files/${c}/`, datetime_removed: null });
    expect(r.json.files[0]).toHaveProperty('original_file_url');
    expect((await srv.call('DELETE', `/files/${b}/storage/`)).status).toBe(200);
    const after = await srv.call('GET', `/groups/${id}/`);
    expect(after.json.files[0]).toBeNull();
    expect(after.json.files[2]).toBeNull();
    expect(after.json.files[1].uuid).toBe(c);
    expect(after.json.files_count).toBe(3);
    const upl = await (await fetch(`${srv.upload}/group/info/?pub_key=${srv.keys.public_key}&group_id=${id}`)).json();
    expect(upl.files[0]).toBeNull();
  });

  it('deletes only the group object; its files stay', async () => {
    const d = await upload(srv.server, srv.keys, 'd.txt', 'ddd');
    const id = await makeGroup(srv.server, srv.keys, [d]);
    const del = await srv.call('DELETE', `/groups/${id}/`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await srv.call('GET', `/groups/${id}/`)).status).toBe(404);
    expect((await srv.call('DELETE', `/groups/${id}/`)).status).toBe(404);
    const file = await srv.call('GET', `/files/${d}/`);
    expect(file.status).toBe(200);
    expect(file.json.datetime_removed).toBeNull();
    expect((await fetch(`${srv.cdn}/${id}/`)).status).toBe(404);
  });

  it('answers 404 for unknown, malformed, wrong-count and foreign ids', async () => {
    const other = restClient(srv.rest, await srv.server.createProject());
    const id = created[0] as string;
    for (const bad of [`${crypto.randomUUID()}~1`, 'junk', id.replace(/~1$/, '~9')]) expect((await srv.call('GET', `/groups/${bad}/`)).json).toEqual({ detail: 'Not found.' });
    expect((await other('GET', `/groups/${id}/`)).status).toBe(404);
    expect((await other('DELETE', `/groups/${id}/`)).status).toBe(404);
    expect((await srv.call('GET', `/groups/${id}/`)).status).toBe(200);
  });
});
