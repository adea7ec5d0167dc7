/**
 * A request whose signature was verified once is not hashed again when it comes back byte for byte
 * (src/s3/verified.ts). These tests show the shortcut refuses what the full check refuses: a URL
 * differing from a verified one in any part, a verified presigned URL once expired, a verified
 * request once its secret key is revoked, a verified header signature sent with other header
 * values, and answers what the full check answers for a repeat.
 */
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { useServer } from '../helpers/use-server.js';
import { request, type Res } from '../helpers/http.js';
import { s3Client, S3_SERVER } from './helpers.js';
import type { ProjectKeys } from '../helpers/server.js';

const srv = useServer({ env: S3_SERVER.env });
const bucket = () => srv.keys.public_key;

const presign = (key: string, opts: { expiresIn: number; signingDate?: Date }, keys: ProjectKeys = srv.keys) =>
  getSignedUrl(s3Client(srv.s3, keys), new GetObjectCommand({ Bucket: bucket(), Key: key }), opts);

const code = (r: Res) => [r.status, /<Code>(\w+)<\/Code>/.exec(r.text)?.[1]];

/** A GET with headers fetch would not send as given (Host). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      })
      .on('error', reject);
  });
}

describe('S3 signatures verified once', () => {
  it('a verified presigned URL keeps working; one differing in any part is refused', async () => {
    await s3Client(srv.s3, srv.keys).send(new PutObjectCommand({ Bucket: bucket(), Key: 'cached/a.txt', Body: 'first' }));
    await s3Client(srv.s3, srv.keys).send(new PutObjectCommand({ Bucket: bucket(), Key: 'cached/ab.txt', Body: 'second' }));
    const url = await presign('cached/a.txt', { expiresIn: 600 });
    for (let i = 0; i < 3; i++) expect((await request(url)).text).toBe('first');
    const signature = /X-Amz-Signature=([0-9a-f]{64})/.exec(url)?.[1] as string;
    const flipped = signature.replace(/.$/, (c) => (c === '0' ? '1' : '0'));
    const tampered = [
      url.replace('cached/a.txt', 'cached/ab.txt'),
      url.replace(signature, flipped),
      url.replace('X-Amz-Expires=600', 'X-Amz-Expires=6000'),
      `${url}&response-content-type=text%2Fhtml`,
      url.replace(signature, signature.toUpperCase()),
    ];
    for (const t of tampered) expect(code(await request(t)), t).toEqual([403, 'SignatureDoesNotMatch']);
    // The Host header is signed too: the same URL sent for another host is another request.
    const other = await rawGet(url, { host: 'elsewhere.example:80' });
    expect([other.status, other.text.includes('SignatureDoesNotMatch')]).toEqual([403, true]);
    expect((await request(url)).text).toBe('first');
  });

  it('a presigned URL\'s response-* parameters set the answer\'s headers on every repeat', async () => {
    const url = await getSignedUrl(
      s3Client(srv.s3, srv.keys),
      new GetObjectCommand({ Bucket: bucket(), Key: 'cached/a.txt', ResponseContentType: 'text/x-test', ResponseContentDisposition: 'attachment; filename="a.txt"' }),
      { expiresIn: 600 },
    );
    for (let i = 0; i < 2; i++) {
      const r = await request(url);
      expect([r.text, r.headers.get('content-type'), r.headers.get('content-disposition')]).toEqual(['first', 'text/x-test', 'attachment; filename="a.txt"']);
    }
    expect((await request(await presign('cached/a.txt', { expiresIn: 600 }))).headers.get('content-type')).not.toBe('text/x-test');
  });

  it('a verified presigned URL is refused once it has expired', async () => {
    // Signed 52 s ago for 60 s: about 8 s left, time enough for the first request on a loaded machine.
    const signedAt = Date.now() - 52_000;
    const url = await presign('cached/a.txt', { expiresIn: 60, signingDate: new Date(signedAt) });
    expect((await request(url)).status).toBe(200);
    await sleep(Math.max(0, signedAt + 61_000 - Date.now()));
    const r = await request(url);
    expect([r.status, /Request has expired/.test(r.text)]).toEqual([403, true]);
  });

  it('a verified request is refused once its secret key is revoked', async () => {
    const added = JSON.parse(srv.server.cli(['key', 'add', '--pub-key', bucket(), '--json'])) as { id: number; secret_key: string };
    const keys = { public_key: bucket(), secret_key: added.secret_key };
    const url = await presign('cached/a.txt', { expiresIn: 600 }, keys);
    expect((await request(url)).text).toBe('first');
    srv.server.cli(['key', 'revoke', '--pub-key', bucket(), '--id', String(added.id)]);
    // Another process revoked it: this node reads the project's keys again within 2 s.
    await sleep(2500);
    expect(code(await request(url))).toEqual([403, 'SignatureDoesNotMatch']);
    // The project's other key still reads.
    expect((await request(await presign('cached/a.txt', { expiresIn: 600 }))).text).toBe('first');
  });

  it('a header-signed request repeated as is works; its signature with other header values is refused', async () => {
    const sent: Array<{ path: string; query: Record<string, string>; headers: Record<string, string> }> = [];
    const client = s3Client(srv.s3, srv.keys);
    // The request as signed and sent, seen at the last step before the wire.
    client.middlewareStack.add(
      (next) => async (args) => {
        const r = args.request as { path: string; query: Record<string, string>; headers: Record<string, string> };
        sent.push({ path: r.path, query: { ...r.query }, headers: { ...r.headers } });
        return next(args);
      },
      { step: 'deserialize' },
    );
    const got = await client.send(new GetObjectCommand({ Bucket: bucket(), Key: 'cached/a.txt' }));
    expect(await got.Body?.transformToString()).toBe('first');
    const last = sent.at(-1) as (typeof sent)[number];
    const query = new URLSearchParams(last.query).toString();
    const url = `${srv.s3}${last.path}${query ? `?${query}` : ''}`;
    const headers = Object.fromEntries(Object.entries(last.headers).filter(([name]) => name.toLowerCase() !== 'host'));
    expect((await rawGet(url, headers)).text).toBe('first');
    expect((await rawGet(url, headers)).text).toBe('first');
    const amzDate = headers['x-amz-date'] as string;
    const later = amzDate.replace(/(\d)Z$/, (_m, d: string) => `${(Number(d) + 1) % 10}Z`);
    const moved = await rawGet(url, { ...headers, 'x-amz-date': later });
    expect([moved.status, moved.text.includes('SignatureDoesNotMatch')]).toEqual([403, true]);
  });

  it('presigned URLs taking turns each answer their own object, and a signed header changed between repeats is refused each time', async () => {
    await s3Client(srv.s3, srv.keys).send(new PutObjectCommand({ Bucket: bucket(), Key: 'turns/a.txt', Body: 'A' }));
    await s3Client(srv.s3, srv.keys).send(new PutObjectCommand({ Bucket: bucket(), Key: 'turns/b.txt', Body: 'B' }));
    const a = await presign('turns/a.txt', { expiresIn: 600 });
    const b = await presign('turns/b.txt', { expiresIn: 600 });
    // The same length: told apart by their characters, not their lengths.
    expect(a.length).toBe(b.length);
    const texts: string[] = [];
    for (const url of [a, a, b, b, a, b, a]) texts.push((await request(url)).text);
    expect(texts.join('')).toBe('AABBABA');
    // The same URL again and again, its signed Host changed in between: each changed one is checked afresh.
    for (let i = 0; i < 2; i++) {
      expect((await rawGet(a, {})).text).toBe('A');
      const other = await rawGet(a, { host: 'elsewhere.example:80' });
      expect([other.status, other.text.includes('SignatureDoesNotMatch')]).toEqual([403, true]);
    }
  });
});
