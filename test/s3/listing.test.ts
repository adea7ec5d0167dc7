/**
 * ListObjectsV2 and ListObjects (V1) over the AWS SDK: UTF-8 byte order across keyed files and
 * files uploaded another way (`<uuid>/<name>`), Prefix, Delimiter's CommonPrefixes, MaxKeys with
 * continuation tokens, markers and StartAfter.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ListObjectsCommand, ListObjectsV2Command, PutObjectCommand, type ListObjectsV2CommandOutput } from '@aws-sdk/client-s3';
import { useServer } from '../helpers/use-server.js';
import { s3Client, S3_SERVER } from './helpers.js';

const srv = useServer(S3_SERVER);
const client = () => s3Client(srv.s3, srv.keys);
const bucket = () => srv.keys.public_key;

// Byte order, not UTF-16 order: U+FF5E (EF BD 9E) sorts before U+1F600 (F0 9F 98 80), though its
// UTF-16 unit is above the emoji's first surrogate.
const KEYS = ['a/1.txt', 'a/2.txt', 'a/b/3.txt', 'b.txt', 'c/4.txt', 'z/\uff5e.txt', 'z/\u{1f600}.txt', 'Zed.txt', 'é.txt'];
let unkeyed = '';

/** Byte-order sort, as S3 lists. */
const byBytes = (keys: string[]) => [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));

beforeAll(async () => {
  for (const key of KEYS) await client().send(new PutObjectCommand({ Bucket: bucket(), Key: key, Body: key }));
  unkeyed = `${await srv.uploadFile('uploaded.txt', 'via base')}/uploaded.txt`;
});

async function allV2(params: { Prefix?: string; Delimiter?: string; MaxKeys?: number; StartAfter?: string }) {
  const keys: string[] = [];
  const prefixes: string[] = [];
  let token: string | undefined;
  let pages = 0;
  for (;;) {
    const r: ListObjectsV2CommandOutput = await client().send(new ListObjectsV2Command({ Bucket: bucket(), ...params, ContinuationToken: token }));
    pages++;
    keys.push(...(r.Contents ?? []).map((c) => c.Key!));
    prefixes.push(...(r.CommonPrefixes ?? []).map((p) => p.Prefix!));
    if (!r.IsTruncated) return { keys, prefixes, pages };
    token = r.NextContinuationToken;
  }
}

describe('ListObjectsV2', () => {
  it('lists every object in UTF-8 byte order, keyed files and uploaded ones together', async () => {
    const { keys } = await allV2({});
    expect(keys).toEqual(byBytes([...KEYS, unkeyed]));
  });

  it('pages with MaxKeys and continuation tokens, the same keys in the same order', async () => {
    const { keys, pages } = await allV2({ MaxKeys: 2 });
    expect(keys).toEqual(byBytes([...KEYS, unkeyed]));
    expect(pages).toBe(5);
  });

  it('Prefix and Delimiter: keys at the level and CommonPrefixes below it', async () => {
    expect(await allV2({ Delimiter: '/' })).toMatchObject({ keys: byBytes(['b.txt', 'Zed.txt', 'é.txt']), prefixes: byBytes(['a/', 'c/', 'z/', unkeyed.slice(0, 37)]) });
    expect(await allV2({ Prefix: 'a/', Delimiter: '/' })).toMatchObject({ keys: ['a/1.txt', 'a/2.txt'], prefixes: ['a/b/'] });
    // One per page: each common prefix is one entry, and the next page starts past it.
    const paged = await allV2({ Delimiter: '/', MaxKeys: 1 });
    expect([...paged.keys, ...paged.prefixes].length).toBe(7);
    expect(paged.prefixes).toEqual(byBytes(['a/', 'c/', 'z/', unkeyed.slice(0, 37)]));
  });

  it('StartAfter starts after the key; a prefix of an uploaded file\'s uuid finds it', async () => {
    expect((await allV2({ StartAfter: 'b.txt' })).keys).toEqual(byBytes([...KEYS, unkeyed]).filter((k) => Buffer.compare(Buffer.from(k), Buffer.from('b.txt')) > 0));
    expect((await allV2({ Prefix: unkeyed.slice(0, 5) })).keys).toEqual([unkeyed]);
    expect((await allV2({ Prefix: unkeyed.slice(0, 40) })).keys).toEqual([unkeyed]);
  });

  it('encoding-type=url percent-encodes keys (the SDK decodes them)', async () => {
    const r = await client().send(new ListObjectsV2Command({ Bucket: bucket(), Prefix: 'z/', EncodingType: 'url' }));
    expect(r.Contents?.map((c) => decodeURIComponent(c.Key!))).toEqual(['z/\uff5e.txt', 'z/\u{1f600}.txt']);
  });
});

describe('ListObjects (V1)', () => {
  it('pages with Marker / NextMarker and groups with Delimiter', async () => {
    const keys: string[] = [];
    let marker: string | undefined;
    for (;;) {
      const r = await client().send(new ListObjectsCommand({ Bucket: bucket(), MaxKeys: 3, Marker: marker }));
      keys.push(...(r.Contents ?? []).map((c) => c.Key!));
      if (!r.IsTruncated) break;
      marker = r.NextMarker ?? keys[keys.length - 1];
    }
    expect(keys).toEqual(byBytes([...KEYS, unkeyed]));
    const r = await client().send(new ListObjectsCommand({ Bucket: bucket(), Delimiter: '/', Prefix: 'a/' }));
    expect([r.Contents?.map((c) => c.Key), r.CommonPrefixes?.map((p) => p.Prefix)]).toEqual([['a/1.txt', 'a/2.txt'], ['a/b/']]);
  });
});
