/**
 * The S3 surface with the AWS SDK for JavaScript v3: objects are the project's files (PutObject
 * makes one, replaces the file under the same key, DeleteObject removes it), reads with ranges
 * and conditions, and a file uploaded through /base/ is the object `<uuid>/<name>`.
 */
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CopyObjectCommand,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { useServer } from '../helpers/use-server.js';
import { request } from '../helpers/http.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { s3Client, s3ErrorOf, S3_SERVER } from './helpers.js';

// Webhooks reach the test's receiver on loopback.
const srv = useServer({ env: { ...S3_SERVER.env, STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8' } });
const client = () => s3Client(srv.s3, srv.keys);
const bucket = () => srv.keys.public_key;
const md5 = (b: Buffer | string) => crypto.createHash('md5').update(b).digest('hex');

async function getBytes(key: string, extra: Partial<ConstructorParameters<typeof GetObjectCommand>[0]> = {}) {
  const r = await client().send(new GetObjectCommand({ Bucket: bucket(), Key: key, ...extra }));
  return { r, body: Buffer.from(await r.Body!.transformToByteArray()) };
}

describe('S3 objects over the AWS SDK', () => {
  it('lists the project\'s one bucket, named by its public key', async () => {
    const r = await client().send(new ListBucketsCommand({}));
    expect(r.Buckets?.map((b) => b.Name)).toEqual([bucket()]);
  });

  it('PutObject makes a stored file with its type and metadata; GetObject and HeadObject read it back', async () => {
    const data = Buffer.from('hello, objects');
    const put = await client().send(new PutObjectCommand({ Bucket: bucket(), Key: 'docs/hello.txt', Body: data, ContentType: 'text/plain', Metadata: { owner: 'ops', 'kind.v1': 'x' } }));
    expect(put.ETag).toBe(`"${md5(data)}"`);
    const { r, body } = await getBytes('docs/hello.txt');
    expect(body.equals(data)).toBe(true);
    expect(r.ContentType).toBe('text/plain');
    expect(r.ETag).toBe(`"${md5(data)}"`);
    expect(r.Metadata).toEqual({ owner: 'ops', 'kind.v1': 'x' });
    const head = await client().send(new HeadObjectCommand({ Bucket: bucket(), Key: 'docs/hello.txt' }));
    expect(head.ContentLength).toBe(data.length);
    // The same file over the REST API: stored (autostore), metadata, original filename.
    const list = await srv.call('GET', '/files/?limit=100');
    const file = (list.json.results as Array<Record<string, unknown>>).find((f) => f.original_filename === 'hello.txt');
    expect(file?.datetime_stored).toBeTruthy();
    expect(file?.metadata).toEqual({ owner: 'ops', 'kind.v1': 'x' });
  });

  it('a streamed body (aws-chunked with a checksum trailer) is stored whole', async () => {
    const data = crypto.randomBytes(200_000);
    await client().send(new PutObjectCommand({ Bucket: bucket(), Key: 'streamed.bin', Body: Readable.from([data.subarray(0, 70_000), data.subarray(70_000)]), ContentLength: data.length }));
    const { body } = await getBytes('streamed.bin');
    expect(md5(body)).toBe(md5(data));
  });

  it('a second PutObject on a key replaces the file: the old one is removed', async () => {
    await client().send(new PutObjectCommand({ Bucket: bucket(), Key: 'replace/me.txt', Body: 'one' }));
    const first = (await srv.call('GET', '/files/?limit=100')).json.results.find((f: { original_filename: string }) => f.original_filename === 'me.txt').uuid as string;
    await client().send(new PutObjectCommand({ Bucket: bucket(), Key: 'replace/me.txt', Body: 'two' }));
    expect((await getBytes('replace/me.txt')).body.toString()).toBe('two');
    const old = await srv.call('GET', `/files/${first}/`);
    expect(old.json.datetime_removed).toBeTruthy();
  });

  it('Range gives 206 with the bytes asked for; a range past the end is InvalidRange', async () => {
    await client().send(new PutObjectCommand({ Bucket: bucket(), Key: 'range.txt', Body: '0123456789' }));
    const { r, body } = await getBytes('range.txt', { Range: 'bytes=2-5' });
    expect(body.toString()).toBe('2345');
    expect(r.ContentRange).toBe('bytes 2-5/10');
    expect((await getBytes('range.txt', { Range: 'bytes=-3' })).body.toString()).toBe('789');
    expect(await s3ErrorOf(getBytes('range.txt', { Range: 'bytes=20-30' }))).toEqual({ code: 'InvalidRange', status: 416 });
    expect(await s3ErrorOf(getBytes('range.txt', { PartNumber: 1 }))).toEqual({ code: 'NotImplemented', status: 501 });
  });

  it('If-None-Match and If-Modified-Since answer 304; If-Match a wrong ETag 412', async () => {
    const put = await client().send(new PutObjectCommand({ Bucket: bucket(), Key: 'cond.txt', Body: 'conditional' }));
    const url = `${srv.s3}/${bucket()}/cond.txt`;
    const { getSignedUrl } = await import('@aws-sdk/s3-request-presigner');
    const signed = await getSignedUrl(client(), new GetObjectCommand({ Bucket: bucket(), Key: 'cond.txt' }), { expiresIn: 60 });
    expect(signed.startsWith(url)).toBe(true);
    expect((await request(signed, { headers: { 'if-none-match': put.ETag! } })).status).toBe(304);
    expect((await request(signed, { headers: { 'if-modified-since': new Date(Date.now() + 60_000).toUTCString() } })).status).toBe(304);
    expect((await request(signed, { headers: { 'if-modified-since': new Date(Date.now() - 3600_000).toUTCString() } })).status).toBe(200);
    expect((await request(signed, { headers: { 'if-match': '"0000"' } })).status).toBe(412);
  });

  it('a file uploaded through /base/ is the object <uuid>/<original filename>', async () => {
    const uuid = await srv.uploadFile('via base.txt', 'from the upload api');
    const { body } = await getBytes(`${uuid}/via base.txt`);
    expect(body.toString()).toBe('from the upload api');
    expect(await s3ErrorOf(getBytes(`${uuid}/other-name.txt`))).toEqual({ code: 'NoSuchKey', status: 404 });
  });

  it('a read object reflects changes made through the other APIs and new objects under a missing key', async () => {
    const uuid = await srv.uploadFile('changing.txt', 'read twice');
    const key = `${uuid}/changing.txt`;
    for (let i = 0; i < 2; i++) expect((await getBytes(key)).body.toString()).toBe('read twice');
    expect((await srv.call('PUT', `/files/${uuid}/metadata/kind/`, { body: '"note"' })).status).toBe(201);
    expect((await client().send(new HeadObjectCommand({ Bucket: bucket(), Key: key }))).Metadata).toEqual({ kind: 'note' });
    expect((await srv.call('DELETE', `/files/${uuid}/storage/`)).status).toBe(200);
    expect(await s3ErrorOf(getBytes(key))).toEqual({ code: 'NoSuchKey', status: 404 });
    expect(await s3ErrorOf(getBytes('later/here.txt'))).toEqual({ code: 'NoSuchKey', status: 404 });
    await client().send(new PutObjectCommand({ Bucket: bucket(), Key: 'later/here.txt', Body: 'now here' }));
    expect((await getBytes('later/here.txt')).body.toString()).toBe('now here');
  });

  it('PutObject on a file\'s <uuid>/<name> key replaces that file', async () => {
    const uuid = await srv.uploadFile('replaced.txt', 'uploaded through /base/');
    await client().send(new PutObjectCommand({ Bucket: bucket(), Key: `${uuid}/replaced.txt`, Body: 'written over S3' }));
    expect((await getBytes(`${uuid}/replaced.txt`)).body.toString()).toBe('written over S3');
    expect((await srv.call('GET', `/files/${uuid}/`)).json.datetime_removed).toBeTruthy();
  });

  it('DeleteObject and DeleteObjects remove the files; a key naming nothing is no error', async () => {
    await client().send(new PutObjectCommand({ Bucket: bucket(), Key: 'gone/a', Body: 'a' }));
    await client().send(new PutObjectCommand({ Bucket: bucket(), Key: 'gone/b', Body: 'b' }));
    await client().send(new PutObjectCommand({ Bucket: bucket(), Key: 'gone/c', Body: 'c' }));
    await client().send(new DeleteObjectCommand({ Bucket: bucket(), Key: 'gone/a' }));
    await client().send(new DeleteObjectCommand({ Bucket: bucket(), Key: 'gone/never-there' }));
    const r = await client().send(new DeleteObjectsCommand({ Bucket: bucket(), Delete: { Objects: [{ Key: 'gone/b' }, { Key: 'gone/c' }, { Key: 'gone/x' }] } }));
    expect(r.Deleted?.map((d) => d.Key).sort()).toEqual(['gone/b', 'gone/c', 'gone/x']);
    for (const key of ['gone/a', 'gone/b', 'gone/c']) expect(await s3ErrorOf(getBytes(key))).toEqual({ code: 'NoSuchKey', status: 404 });
  });

  it('CopyObject copies within the project, keeping or replacing the metadata', async () => {
    await client().send(new PutObjectCommand({ Bucket: bucket(), Key: 'copy/src.txt', Body: 'copied bytes', ContentType: 'text/plain', Metadata: { a: '1' } }));
    await client().send(new CopyObjectCommand({ Bucket: bucket(), Key: 'copy/same.txt', CopySource: `${bucket()}/copy/src.txt` }));
    const same = await getBytes('copy/same.txt');
    expect([same.body.toString(), same.r.Metadata, same.r.ContentType]).toEqual(['copied bytes', { a: '1' }, 'text/plain']);
    await client().send(new CopyObjectCommand({ Bucket: bucket(), Key: 'copy/new.txt', CopySource: `${bucket()}/copy/src.txt`, MetadataDirective: 'REPLACE', Metadata: { b: '2' } }));
    expect((await getBytes('copy/new.txt')).r.Metadata).toEqual({ b: '2' });
    expect((await s3ErrorOf(client().send(new CopyObjectCommand({ Bucket: bucket(), Key: 'copy/x', CopySource: 'otherbucket/copy/src.txt' })))).code).toBe('AccessDenied');
  });

  it('metadata past the limits is refused', async () => {
    expect(await s3ErrorOf(client().send(new PutObjectCommand({ Bucket: bucket(), Key: 'meta.txt', Body: 'x', Metadata: { 'a+b': 'v' } })))).toEqual({ code: 'InvalidArgument', status: 400 });
    expect((await s3ErrorOf(client().send(new PutObjectCommand({ Bucket: bucket(), Key: 'meta.txt', Body: 'x', Metadata: { a: 'v'.repeat(513) } })))).status).toBe(400);
  });

  it('buckets are neither created nor deleted; another name is NoSuchBucket', async () => {
    expect(await s3ErrorOf(client().send(new CreateBucketCommand({ Bucket: bucket() })))).toEqual({ code: 'BucketAlreadyOwnedByYou', status: 409 });
    expect((await s3ErrorOf(client().send(new CreateBucketCommand({ Bucket: 'another-bucket' })))).code).toBe('AccessDenied');
    expect((await s3ErrorOf(client().send(new DeleteBucketCommand({ Bucket: bucket() })))).code).toBe('AccessDenied');
    expect(await s3ErrorOf(client().send(new GetObjectCommand({ Bucket: 'another-bucket', Key: 'k' })))).toEqual({ code: 'NoSuchBucket', status: 404 });
  });
});

describe('S3 objects\' events', () => {
  let hooks: Receiver;
  beforeAll(async () => {
    hooks = await startReceiver();
  });
  afterAll(async () => {
    await hooks?.close();
  });

  it('PutObject sends file.uploaded; replacing the key sends the old file\'s file.deleted', async () => {
    for (const event of ['file.uploaded', 'file.deleted']) {
      const sub = await srv.call('POST', '/webhooks/', { body: new URLSearchParams({ target_url: hooks.url, event }).toString(), contentType: 'application/x-www-form-urlencoded' });
      expect(sub.status).toBe(201);
    }
    await client().send(new PutObjectCommand({ Bucket: bucket(), Key: 'events/one.txt', Body: 'first' }));
    await client().send(new PutObjectCommand({ Bucket: bucket(), Key: 'events/one.txt', Body: 'second' }));
    const events = await hooks.waitFor(3, 20_000, (r) => r.json?.data?.original_filename === 'one.txt');
    const byEvent = (e: string) => events.filter((r) => r.json.hook.event === e).map((r) => r.json.data.uuid as string);
    const uploaded = byEvent('file.uploaded');
    expect(uploaded).toHaveLength(2);
    // The first file is the one removed.
    const first = (await srv.call('GET', `/files/${uploaded[0]}/`)).json.datetime_removed ? uploaded[0] : uploaded[1];
    expect(byEvent('file.deleted')).toEqual([first]);
  });
});

describe('S3 authentication', () => {
  it('unsigned requests are refused', async () => {
    const r = await request(`${srv.s3}/${bucket()}/docs/hello.txt`);
    expect(r.status).toBe(403);
    expect(r.text).toContain('<Code>AccessDenied</Code>');
  });

  it('a wrong secret is SignatureDoesNotMatch, an unknown access key InvalidAccessKeyId', async () => {
    const wrong = s3Client(srv.s3, { public_key: bucket(), secret_key: 'not-the-secret' });
    expect(await s3ErrorOf(wrong.send(new ListBucketsCommand({})))).toEqual({ code: 'SignatureDoesNotMatch', status: 403 });
    const unknown = s3Client(srv.s3, { public_key: 'nosuchproject', secret_key: 'x' });
    expect(await s3ErrorOf(unknown.send(new ListBucketsCommand({})))).toEqual({ code: 'InvalidAccessKeyId', status: 403 });
  });

  it('any region name is accepted', async () => {
    const r = await s3Client(srv.s3, srv.keys, 'eu-central-7').send(new ListBucketsCommand({}));
    expect(r.Buckets?.length).toBe(1);
  });

  it('a presigned URL works until tampered with; a second project\'s keys cannot read this bucket', async () => {
    await client().send(new PutObjectCommand({ Bucket: bucket(), Key: 'presigned.txt', Body: 'signed in the query' }));
    const { getSignedUrl } = await import('@aws-sdk/s3-request-presigner');
    const url = await getSignedUrl(client(), new GetObjectCommand({ Bucket: bucket(), Key: 'presigned.txt' }), { expiresIn: 60 });
    expect((await request(url)).text).toBe('signed in the query');
    const tampered = await request(url.replace('presigned.txt', 'presigned.tx'));
    expect([tampered.status, tampered.text.includes('SignatureDoesNotMatch')]).toEqual([403, true]);
    const other = await srv.newProject();
    expect((await s3ErrorOf(s3Client(srv.s3, other.keys).send(new GetObjectCommand({ Bucket: bucket(), Key: 'presigned.txt' })))).code).toBe('NoSuchBucket');
  });
});
