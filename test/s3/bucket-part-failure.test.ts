/**
 * An UploadPart streamed into the bucket (object storage, src/s3/multipart/bucket-parts.ts) whose
 * body fails: the client went away mid-part, or the body's last check (a checksum) failed after
 * its bytes passed. The part's request to the bucket declared the whole length, so it must be
 * stopped, not left waiting for bytes that never come: the write rejects with the body's own error.
 * (Seen as an S3 UploadPart that never answered, about one in 25 with a wrong CRC32.)
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3BlobStore } from '../../src/blobs/s3-store.js';
import { BucketParts } from '../../src/s3/multipart/bucket-parts.js';
import { startS3, type TestS3 } from '../helpers/s3.js';

const MiB = 1024 * 1024;
const PART = 6 * MiB;
let s3: TestS3;
let store: S3BlobStore;
const spoolDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-spool-'));

beforeAll(async () => {
  s3 = await startS3();
  store = new S3BlobStore({ bucket: await s3.createBucket(), region: 'us-east-1', endpoint: s3.endpoint, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, forcePathStyle: true, spoolDir });
});
afterAll(async () => {
  await s3?.close();
  fs.rmSync(spoolDir, { recursive: true, force: true });
});

/** `sent` bytes in 64 KiB chunks, then `failure` instead of the end. */
function failingBody(sent: number, failure: Error): Readable {
  const bytes = crypto.randomBytes(sent);
  let at = 0;
  return new Readable({
    read() {
      if (at < bytes.length) {
        this.push(bytes.subarray(at, at + 64 * 1024));
        at += 64 * 1024;
      } else {
        this.destroy(failure);
      }
    },
  });
}

describe('a part into the bucket whose body fails', () => {
  const tooLarge = () => new Error('too large');

  it.each([
    ['the client goes away mid-part', 2 * MiB],
    ['the last check fails after every byte', PART],
  ])('%s: the write rejects with the body`s error, and the part sent again is taken', async (_case, sent) => {
    const parts = new BucketParts(store, store.multipart);
    const uploadId = crypto.randomUUID();
    const storeUploadId = await parts.start(uploadId);
    const failure = new Error('the body failed');
    await expect(parts.write(uploadId, storeUploadId, 1, failingBody(sent, failure), PART, tooLarge)).rejects.toBe(failure);
    // The bucket's multipart upload is still usable: a good part afterwards is taken.
    const good = crypto.randomBytes(PART);
    const written = await parts.write(uploadId, storeUploadId, 1, Readable.from([good]), PART, tooLarge);
    expect(written.put).toMatchObject({ size: PART, md5: crypto.createHash('md5').update(good).digest('hex') });
    await parts.abort(uploadId, storeUploadId);
  }, 30_000);
});
