/**
 * S3 multipart uploads over the AWS SDK: parts to the blob store, completion into one file with S3's
 * multipart ETag, the 5 MiB minimum part, part and upload listings, abort.
 */
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { useServer } from '../helpers/use-server.js';
import { s3Client, s3ErrorOf, S3_SERVER } from './helpers.js';

// Completions of 8 MiB and more are answered before the file's digests (a job computes them).
const srv = useServer({ env: { ...S3_SERVER.env, STOWAGE_DIGEST_LATER_BYTES: String(8 * 1024 * 1024) } });
const client = () => s3Client(srv.s3, srv.keys);
const bucket = () => srv.keys.public_key;
const md5 = (b: Buffer) => crypto.createHash('md5').update(b).digest();
const MiB = 1024 * 1024;

describe('S3 multipart uploads', () => {
  it('lib-storage\'s Upload: parts of 5 MiB, one file whose ETag is the MD5 of the part MD5s with their count', async () => {
    const data = crypto.randomBytes(11 * MiB);
    await new Upload({ client: client(), params: { Bucket: bucket(), Key: 'big/eleven.bin', Body: data, ContentType: 'application/x-test', Metadata: { from: 'multipart' } }, partSize: 5 * MiB, queueSize: 2 }).done();
    const r = await client().send(new GetObjectCommand({ Bucket: bucket(), Key: 'big/eleven.bin' }));
    const body = Buffer.from(await r.Body!.transformToByteArray());
    expect(body.equals(data)).toBe(true);
    const parts = [data.subarray(0, 5 * MiB), data.subarray(5 * MiB, 10 * MiB), data.subarray(10 * MiB)];
    expect(r.ETag).toBe(`"${md5(Buffer.concat(parts.map(md5))).toString('hex')}-3"`);
    expect([r.ContentType, r.Metadata]).toEqual(['application/x-test', { from: 'multipart' }]);
    // A file like any other: the REST API sees it, with the key's last segment as its name.
    const files = (await srv.call('GET', '/files/?limit=100')).json.results as Array<{ original_filename: string; size: number }>;
    expect(files.find((f) => f.original_filename === 'eleven.bin')?.size).toBe(data.length);
  });

  it('a part under 5 MiB but the last is EntityTooSmall; wrong ETags and order are refused; parts and uploads are listed', async () => {
    const { UploadId } = await client().send(new CreateMultipartUploadCommand({ Bucket: bucket(), Key: 'small/parts.bin' }));
    const etags: string[] = [];
    for (const n of [1, 2]) etags.push((await client().send(new UploadPartCommand({ Bucket: bucket(), Key: 'small/parts.bin', UploadId, PartNumber: n, Body: Buffer.alloc(1000, n) }))).ETag!);
    const parts = await client().send(new ListPartsCommand({ Bucket: bucket(), Key: 'small/parts.bin', UploadId }));
    expect(parts.Parts?.map((p) => [p.PartNumber, p.Size, p.ETag])).toEqual([
      [1, 1000, etags[0]],
      [2, 1000, etags[1]],
    ]);
    const uploads = await client().send(new ListMultipartUploadsCommand({ Bucket: bucket(), Prefix: 'small/' }));
    expect(uploads.Uploads?.map((u) => [u.Key, u.UploadId])).toEqual([['small/parts.bin', UploadId]]);
    const completeWith = (Parts: Array<{ PartNumber: number; ETag: string }>) => client().send(new CompleteMultipartUploadCommand({ Bucket: bucket(), Key: 'small/parts.bin', UploadId, MultipartUpload: { Parts } }));
    expect(await s3ErrorOf(completeWith([{ PartNumber: 1, ETag: etags[0]! }, { PartNumber: 2, ETag: etags[1]! }]))).toEqual({ code: 'EntityTooSmall', status: 400 });
    expect((await s3ErrorOf(completeWith([{ PartNumber: 1, ETag: '"00000000000000000000000000000000"' }]))).code).toBe('InvalidPart');
    expect((await s3ErrorOf(completeWith([{ PartNumber: 2, ETag: etags[1]! }, { PartNumber: 1, ETag: etags[0]! }]))).code).toBe('InvalidPartOrder');
    // The last part alone may be small: one part of 1000 bytes completes.
    const done = await completeWith([{ PartNumber: 2, ETag: etags[1]! }]);
    expect(done.ETag).toMatch(/-1"$/);
    const r = await client().send(new GetObjectCommand({ Bucket: bucket(), Key: 'small/parts.bin' }));
    expect(Buffer.from(await r.Body!.transformToByteArray()).equals(Buffer.alloc(1000, 2))).toBe(true);
    // Completed: the upload is gone.
    expect((await s3ErrorOf(client().send(new ListPartsCommand({ Bucket: bucket(), Key: 'small/parts.bin', UploadId })))).code).toBe('NoSuchUpload');
  });

  it('an aborted upload is gone; part numbers are 1 to 10,000', async () => {
    const { UploadId } = await client().send(new CreateMultipartUploadCommand({ Bucket: bucket(), Key: 'aborted.bin' }));
    await client().send(new UploadPartCommand({ Bucket: bucket(), Key: 'aborted.bin', UploadId, PartNumber: 1, Body: 'x' }));
    expect((await s3ErrorOf(client().send(new UploadPartCommand({ Bucket: bucket(), Key: 'aborted.bin', UploadId, PartNumber: 10_001, Body: 'x' })))).code).toBe('InvalidArgument');
    await client().send(new AbortMultipartUploadCommand({ Bucket: bucket(), Key: 'aborted.bin', UploadId }));
    expect((await s3ErrorOf(client().send(new UploadPartCommand({ Bucket: bucket(), Key: 'aborted.bin', UploadId, PartNumber: 2, Body: 'x' })))).code).toBe('NoSuchUpload');
    expect((await client().send(new ListMultipartUploadsCommand({ Bucket: bucket(), Prefix: 'aborted' }))).Uploads ?? []).toEqual([]);
  });
});
