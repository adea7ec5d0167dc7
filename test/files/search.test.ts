/**
 * POST /files/search/ (docs/files.md): the official rest-client's searchFiles and paginate, the
 * query language's conditions one by one, keyset pages through the `next` cursor, and the 400
 * shape the client turns into RestClientValidationError.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { RestClientValidationError, UploadcareAuthSchema, searchFiles } from '@uploadcare/rest-client';
import { useServer } from '../helpers/use-server.js';
import { png } from '../groups/helpers.js';

const s = useServer({ project: ['--autostore', 'off'] });
const settings = () => ({ authSchema: new UploadcareAuthSchema({ publicKey: s.keys.public_key, secretKey: s.keys.secret_key }), apiBaseURL: s.rest });
const ids: Record<string, string> = {};

beforeAll(async () => {
  ids.report = await s.uploadFile('Annual Report.pdf', '%PDF-1.4 report body', { fields: { 'metadata[dept]': 'finance', tags: 'docs' } });
  ids.cat = await s.uploadFile('cat.png', await png(20, 20), { fields: { 'metadata[dept]': 'marketing', tags: 'cat,animal' } });
  ids.dog = await s.uploadFile('dog.png', await png(40, 40), { fields: { tags: 'animal' } });
  ids.notes = await s.uploadFile('notes.txt', 'x'.repeat(5000), { fields: { 'metadata[topic]': 'quarterly report draft' } });
  ids.unstored = await s.uploadFile('temp.txt', 'temporary', { store: false });
  ids.gone = await s.uploadFile('gone.txt', 'removed later', { fields: { tags: 'animal' } });
  expect((await s.call('DELETE', `/files/${ids.gone}/storage/`)).status).toBe(200);
}, 120_000);

const uuids = (r: { results: Array<{ uuid: string }> }) => r.results.map((f) => f.uuid);
const raw = (body: unknown, query = '') => s.call('POST', `/files/search/${query}`, { body: JSON.stringify(body) });

describe('POST /files/search/', () => {
  it('answers the official client: tags, image filter, sort', async () => {
    const animals = await searchFiles({ tags: { all: ['animal'] }, sort: [{ field: 'datetimeUploaded', order: 'desc' }] }, settings());
    expect(uuids(animals)).toEqual([ids.dog, ids.cat]);
    expect(animals.total).toBe(2);
    expect(animals.results[0]!.tags).toEqual(['animal']);
    const images = await searchFiles({ isImage: true, sort: [{ field: 'size', order: 'asc' }] }, settings());
    expect(uuids(images)).toEqual([ids.cat, ids.dog]);
    const notImages = await searchFiles({ isImage: false, tags: { none: ['docs'] } }, settings());
    expect(uuids(notImages).sort()).toEqual([ids.notes!, ids.unstored!].sort());
    expect(uuids(await searchFiles({ tags: { any: ['cat', 'docs'] } }, settings())).sort()).toEqual([ids.cat!, ids.report!].sort());
  });

  it('matches text, phrases, exact values, metadata and ranges', async () => {
    // `query` looks at names, detected types and metadata values, in any case.
    expect(uuids(await searchFiles({ query: 'REPORT' }, settings())).sort()).toEqual([ids.report!, ids.notes!].sort());
    expect(uuids(await searchFiles({ phrase: { originalFilename: 'annual' } }, settings()))).toEqual([ids.report]);
    expect(uuids(await searchFiles({ phrase: { metadata: 'quarterly' } }, settings()))).toEqual([ids.notes]);
    expect(uuids(await searchFiles({ exact: { detectedMimeType: ['image/png'] }, sort: [{ field: 'originalFilename' }] }, settings()))).toEqual([ids.cat, ids.dog]);
    expect(uuids(await searchFiles({ exact: { metadata: { dept: ['finance', 'sales'] } } }, settings()))).toEqual([ids.report]);
    expect(uuids(await searchFiles({ exact: { originalFilename: ['notes.txt'], uuid: [ids.notes!] } }, settings()))).toEqual([ids.notes]);
    expect(uuids(await searchFiles({ size: { gte: 5000, lte: 5000 } }, settings()))).toEqual([ids.notes]);
    const info = (await s.call('GET', `/files/${ids.dog}/`)).json;
    const after = await searchFiles({ datetimeUploaded: { gte: info.datetime_uploaded }, sort: [{ field: 'datetimeUploaded' }] }, settings());
    expect(uuids(after)).toEqual([ids.dog, ids.notes, ids.unstored]);
  });

  it('filters stored and removed state (ours: `stored`, `removed`)', async () => {
    expect((await raw({ stored: false })).json.results.map((f: { uuid: string }) => f.uuid)).toEqual([ids.unstored]);
    const removed = await raw({ removed: true, tags: { all: ['animal'] } });
    expect(removed.json.results.map((f: { uuid: string }) => f.uuid)).toEqual([ids.gone]);
  });

  it('pages by keyset through `next`, and by offset as the client paginator does', async () => {
    const all = (await raw({ size: { gte: 0 } }, '?limit=100')).json.results.map((f: { uuid: string }) => f.uuid);
    expect(all).toHaveLength(5);
    const seen: string[] = [];
    let r = await raw({ size: { gte: 0 } }, '?limit=2');
    expect(r.json.total).toBe(5);
    for (;;) {
      seen.push(...r.json.results.map((f: { uuid: string }) => f.uuid));
      if (!r.json.next) break;
      const next = new URL(r.json.next as string);
      expect(next.searchParams.get('cursor')).toBeTruthy();
      r = await raw({ size: { gte: 0 } }, next.search);
    }
    expect(seen).toEqual(all);
    // The JS Paginator keeps limit and offset from `next` and drops our cursor: offsets work too.
    const second = await searchFiles({ size: { gte: 0 }, limit: 2, offset: 2 }, settings());
    expect(uuids(second)).toEqual(all.slice(2, 4));
    // A cursor from another order is refused, not misread.
    const firstPage = await raw({ size: { gte: 0 } }, '?limit=2');
    const cursor = new URL(firstPage.json.next as string).searchParams.get('cursor')!;
    const mismatch = await raw({ size: { gte: 0 }, sort: ['size'] }, `?limit=2&cursor=${cursor}`);
    expect(mismatch.status).toBe(400);
    expect(mismatch.json.cursor).toBeDefined();
  });

  it('answers malformed searches with 400 {field: [messages]} (RestClientValidationError)', async () => {
    const err = await searchFiles({ query: 'abc' }, settings()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RestClientValidationError);
    expect((err as RestClientValidationError).errors).toEqual({ query: ['Must be at least 4 characters.'] });
    expect((await raw({})).json.non_field_errors).toBeDefined();
    expect(Object.keys((await raw({ size: { between: 3 } })).json)).toEqual(['size']);
    expect(Object.keys((await raw({ sort: ['-colour'], is_image: true })).json)).toEqual(['sort']);
    expect(Object.keys((await raw({ is_image: true }, '?limit=500')).json)).toEqual(['limit']);
    expect(Object.keys((await raw({ is_image: true }, '?limit=100&offset=950')).json)).toEqual(['offset']);
    expect((await raw({ is_image: true, exact: { uuid: ['nope'] } })).status).toBe(400);
  });
});
