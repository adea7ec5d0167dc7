/**
 * What GetObject and HeadObject answer when the object is read again and again (the path that
 * answers from the node's memory: the key's file, its row, headers built once per row, the bytes):
 * the request id on every answer, one answer's headers never carried into the next, and a change
 * committed by another process on the same store seen by the very next read.
 */
import { describe, expect, it } from 'vitest';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { useServer } from '../helpers/use-server.js';
import { request } from '../helpers/http.js';
import { storeRows, storeWrite } from '../helpers/store-query.js';
import { s3Client, s3ErrorOf, S3_SERVER } from './helpers.js';

const srv = useServer({ env: S3_SERVER.env });
const client = () => s3Client(srv.s3, srv.keys);
const bucket = () => srv.keys.public_key;
const presign = (key: string) => getSignedUrl(client(), new GetObjectCommand({ Bucket: bucket(), Key: key }), { expiresIn: 600 });
const put = (key: string, body: string, extra: Partial<ConstructorParameters<typeof PutObjectCommand>[0]> = {}) =>
  client().send(new PutObjectCommand({ Bucket: bucket(), Key: key, Body: body, ContentType: 'text/plain', ...extra }));

describe('S3 object answers, read again and again', () => {
  it('carry the request id as X-Request-Id and x-amz-request-id, the client\'s own when it sent one', async () => {
    await put('ids/a.txt', 'ids');
    const url = await presign('ids/a.txt');
    const seen = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const r = await request(url);
      expect(r.status).toBe(200);
      const id = r.headers.get('x-request-id');
      expect(id).toMatch(/^[\w.:-]+$/);
      expect(r.headers.get('x-amz-request-id')).toBe(id);
      seen.add(id as string);
    }
    // One id per request, not one per cached answer.
    expect(seen.size).toBe(3);
    const given = await request(url, { headers: { 'x-request-id': 'trace-42' } });
    expect([given.headers.get('x-request-id'), given.headers.get('x-amz-request-id')]).toEqual(['trace-42', 'trace-42']);
    // Where the SDK reads it, on answers and on errors alike.
    const head = await client().send(new HeadObjectCommand({ Bucket: bucket(), Key: 'ids/a.txt' }));
    expect(head.$metadata.requestId).toMatch(/^[\w.:-]+$/);
    const missing = await request(await presign('ids/none.txt'));
    expect(missing.status).toBe(404);
    expect(missing.headers.get('x-amz-request-id')).toBe(missing.headers.get('x-request-id'));
    expect(missing.text).toContain(`<RequestId>${missing.headers.get('x-request-id')}</RequestId>`);
  });

  it('never carry one answer\'s headers into the next: ranges, overrides, 304', async () => {
    const put1 = await put('answers/a.txt', '0123456789', { Metadata: { owner: 'ops' } });
    const url = await presign('answers/a.txt');
    const full = async () => {
      const r = await request(url);
      expect([r.status, r.text, r.headers.get('content-length'), r.headers.get('content-range'), r.headers.get('content-type')]).toEqual([200, '0123456789', '10', null, 'text/plain']);
      expect([r.headers.get('etag'), r.headers.get('x-amz-meta-owner'), r.headers.get('accept-ranges')]).toEqual([put1.ETag, 'ops', 'bytes']);
      expect(r.headers.get('last-modified')).toMatch(/GMT$/);
    };
    await full();
    const part = await request(url, { headers: { range: 'bytes=2-4' } });
    expect([part.status, part.text, part.headers.get('content-range'), part.headers.get('content-length')]).toEqual([206, '234', 'bytes 2-4/10', '3']);
    await full();
    const typed = await getSignedUrl(client(), new GetObjectCommand({ Bucket: bucket(), Key: 'answers/a.txt', ResponseContentType: 'text/x-other' }), { expiresIn: 600 });
    expect((await request(typed)).headers.get('content-type')).toBe('text/x-other');
    await full();
    const same = await request(url, { headers: { 'if-none-match': put1.ETag as string } });
    expect([same.status, same.text]).toEqual([304, '']);
    await full();
  });

  it('show a change committed by another process on the same store at the next read', async () => {
    await put('outside/a.txt', 'outside', { Metadata: { v: '1' } });
    const url = await presign('outside/a.txt');
    const meta = async () => {
      const r = await request(url);
      return [r.status, r.headers.get('x-amz-meta-v')];
    };
    // Read twice first, so that the key, the row and the headers are all held in memory.
    expect(await meta()).toEqual([200, '1']);
    expect(await meta()).toEqual([200, '1']);
    const [{ uuid }] = await storeRows<{ uuid: string }>(srv.server, 'select uuid from files where object_key = ?', ['outside/a.txt']);
    expect(await storeWrite(srv.server, 'update files set metadata = ? where uuid = ?', ['{"v":"2"}', uuid])).toBe(1);
    expect(await meta()).toEqual([200, '2']);
    expect(await meta()).toEqual([200, '2']);
    // The key moved to another name: the old one names nothing at once, the new one the file.
    expect(await storeWrite(srv.server, 'update files set object_key = ? where uuid = ?', ['outside/b.txt', uuid])).toBe(1);
    expect(await s3ErrorOf(client().send(new GetObjectCommand({ Bucket: bucket(), Key: 'outside/a.txt' })))).toEqual({ code: 'NoSuchKey', status: 404 });
    expect((await request(await presign('outside/b.txt'))).text).toBe('outside');
  });
});
