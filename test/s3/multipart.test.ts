/**
 * S3 multipart uploads over the AWS SDK: parts where the object goes (disk: the upload's data file,
 * which becomes the file's blob; object storage: the bucket's own multipart upload), completion into
 * one file with S3's multipart ETag, the 5 MiB minimum part, part and upload listings, abort,
 * UploadPartCopy.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AbortMultipartUploadCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  UploadPartCopyCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { testS3, usingS3 } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { s3Client, s3ErrorOf, S3_SERVER } from './helpers.js';

// Completions of 8 MiB and more are answered before the file's digests (a job computes them).
const srv = useServer({ env: { ...S3_SERVER.env, STOWAGE_DIGEST_LATER_BYTES: String(8 * 1024 * 1024) } });
const client = () => s3Client(srv.s3, srv.keys);
const bucket = () => srv.keys.public_key;
const md5 = (b: Buffer) => crypto.createHash('md5').update(b).digest();
const MiB = 1024 * 1024;

/** Starts a multipart upload of `key` and sends `parts` in order (the first fixes the slot size on disk). */
async function startWithParts(key: string, parts: Buffer[]): Promise<{ id: string; etags: string[] }> {
  const { UploadId } = await client().send(new CreateMultipartUploadCommand({ Bucket: bucket(), Key: key }));
  const etags: string[] = [];
  for (const [i, Body] of parts.entries()) etags.push((await client().send(new UploadPartCommand({ Bucket: bucket(), Key: key, UploadId, PartNumber: i + 1, Body }))).ETag!);
  return { id: UploadId!, etags };
}

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

  it.skipIf(usingS3())('on disk, parts are written in the upload\'s data file, which becomes the file\'s blob (the same inode: no copy)', async () => {
    const data = crypto.randomBytes(6 * MiB + 333);
    const parts = [data.subarray(0, 5 * MiB), data.subarray(5 * MiB)];
    // In order: the first part to arrive fixes the slot size.
    const { id, etags } = await startWithParts('inplace/data.bin', parts);
    expect(etags).toEqual(parts.map((p) => `"${md5(p).toString('hex')}"`));
    const dataFile = path.join(srv.server.dataDir, 'blobs', 's3-multipart', id.slice(0, 2), id, 'data');
    const staged = fs.statSync(dataFile);
    const done = await client().send(new CompleteMultipartUploadCommand({ Bucket: bucket(), Key: 'inplace/data.bin', UploadId: id, MultipartUpload: { Parts: etags.map((ETag, i) => ({ PartNumber: i + 1, ETag })) } }));
    expect(done.ETag).toBe(`"${md5(Buffer.concat(parts.map(md5))).toString('hex')}-2"`);
    const blob = fs.statSync(path.join(srv.server.dataDir, 'blobs', 'files', id.slice(0, 2), id));
    expect(blob.ino).toBe(staged.ino);
    expect(blob.size).toBe(data.length);
    expect(fs.existsSync(dataFile)).toBe(false);
    const r = await client().send(new GetObjectCommand({ Bucket: bucket(), Key: 'inplace/data.bin' }));
    expect(Buffer.from(await r.Body!.transformToByteArray()).equals(data)).toBe(true);
    expect(r.ETag).toBe(done.ETag);
  });

  it.runIf(usingS3())('on object storage, parts go to the bucket\'s own multipart upload, which completes into the file\'s blob', async () => {
    const store = (await testS3()).client;
    const data = crypto.randomBytes(5 * MiB + 4321);
    const parts = [data.subarray(0, 5 * MiB), data.subarray(5 * MiB)];
    const { id, etags } = await startWithParts('bucket/data.bin', parts);
    const fileKey = `files/${id.slice(0, 2)}/${id}`;
    const objects = async (Prefix: string) => (await store.send(new ListObjectsV2Command({ Bucket: srv.server.bucket!, Prefix }))).Contents?.map((o) => o.Key) ?? [];
    // No part is an object of its own: they are parts of the bucket's upload, which completes into the file's key.
    expect(await objects('s3-multipart/')).toEqual([]);
    expect(await objects(fileKey)).toEqual([]);
    const done = await client().send(new CompleteMultipartUploadCommand({ Bucket: bucket(), Key: 'bucket/data.bin', UploadId: id, MultipartUpload: { Parts: etags.map((ETag, i) => ({ PartNumber: i + 1, ETag })) } }));
    expect(done.ETag).toBe(`"${md5(Buffer.concat(parts.map(md5))).toString('hex')}-2"`);
    const r = await client().send(new GetObjectCommand({ Bucket: bucket(), Key: 'bucket/data.bin' }));
    expect(Buffer.from(await r.Body!.transformToByteArray()).equals(data)).toBe(true);
    expect(await objects(fileKey)).toEqual([fileKey]);
  });

  it('parts of several sizes, sent in any order, complete into the right bytes', async () => {
    const data = crypto.randomBytes(5 * MiB + 1000);
    const parts = [data.subarray(0, 5 * MiB), data.subarray(5 * MiB)];
    const { UploadId } = await client().send(new CreateMultipartUploadCommand({ Bucket: bucket(), Key: 'mixed.bin' }));
    // The short last part first: on disk it fixes the slot, and the first part no longer fits one.
    const second = (await client().send(new UploadPartCommand({ Bucket: bucket(), Key: 'mixed.bin', UploadId, PartNumber: 2, Body: parts[1] }))).ETag!;
    const first = (await client().send(new UploadPartCommand({ Bucket: bucket(), Key: 'mixed.bin', UploadId, PartNumber: 1, Body: parts[0] }))).ETag!;
    await client().send(new CompleteMultipartUploadCommand({ Bucket: bucket(), Key: 'mixed.bin', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: first }, { PartNumber: 2, ETag: second }] } }));
    const r = await client().send(new GetObjectCommand({ Bucket: bucket(), Key: 'mixed.bin' }));
    expect(Buffer.from(await r.Body!.transformToByteArray()).equals(data)).toBe(true);
  });

  it('UploadPartCopy: a part from an object of the bucket, whole or a byte range of it', async () => {
    const source = crypto.randomBytes(6 * MiB);
    await client().send(new PutObjectCommand({ Bucket: bucket(), Key: 'copy/source.bin', Body: source }));
    const { UploadId } = await client().send(new CreateMultipartUploadCommand({ Bucket: bucket(), Key: 'copy/target.bin' }));
    const copy = (PartNumber: number, CopySourceRange?: string) =>
      client().send(new UploadPartCopyCommand({ Bucket: bucket(), Key: 'copy/target.bin', UploadId, PartNumber, CopySource: `${bucket()}/copy/source.bin`, ...(CopySourceRange ? { CopySourceRange } : {}) }));
    const first = await copy(1, `bytes=${MiB}-${6 * MiB - 1}`);
    const second = await copy(2);
    expect(first.CopyPartResult?.ETag).toBe(`"${md5(source.subarray(MiB)).toString('hex')}"`);
    expect(second.CopyPartResult?.ETag).toBe(`"${md5(source).toString('hex')}"`);
    expect(await s3ErrorOf(copy(3, `bytes=0-${6 * MiB}`))).toEqual({ code: 'InvalidRange', status: 416 });
    expect(await s3ErrorOf(copy(3, 'bytes=5-1'))).toEqual({ code: 'InvalidArgument', status: 400 });
    expect((await s3ErrorOf(client().send(new UploadPartCopyCommand({ Bucket: bucket(), Key: 'copy/target.bin', UploadId, PartNumber: 3, CopySource: `${bucket()}/copy/missing.bin` })))).code).toBe('NoSuchKey');
    const Parts = [first.CopyPartResult!.ETag!, second.CopyPartResult!.ETag!].map((ETag, i) => ({ PartNumber: i + 1, ETag }));
    await client().send(new CompleteMultipartUploadCommand({ Bucket: bucket(), Key: 'copy/target.bin', UploadId, MultipartUpload: { Parts } }));
    const r = await client().send(new GetObjectCommand({ Bucket: bucket(), Key: 'copy/target.bin' }));
    expect(Buffer.from(await r.Body!.transformToByteArray()).equals(Buffer.concat([source.subarray(MiB), source]))).toBe(true);
  });
});
