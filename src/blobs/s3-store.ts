/**
 * S3-compatible BlobStore (AWS S3, MinIO, R2, …) with the AWS SDK v3. Bytes stream in through
 * lib-storage's Upload (one PutObject for small bodies, a multipart upload with bounded buffers for
 * large ones); the object becomes visible only when the upload completes, so `put` resolving means
 * the bytes are durable. Size limits are enforced while streaming: the upload is aborted and
 * nothing appears under the key.
 */
import { Readable, Transform, pipeline } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { BlobDigests } from '../digests/digest.js';
import { HeadBytes } from './head.js';
import { sweepSpool } from './local-file.js';
import { StreamedDigest, digestStored } from '../digests/streamed-digest.js';
import { BlobNotFound, type BlobEntry, type BlobStore, type ByteRange, type PresignedMultipart, type PutOptions, type PutResult, type UploadedPart } from './store.js';

export interface S3StoreOptions {
  bucket: string;
  region: string;
  endpoint?: string | undefined;
  accessKeyId?: string | undefined;
  secretAccessKey?: string | undefined;
  forcePathStyle: boolean;
  /** Endpoint clients reach for presigned part URLs when it differs from the nodes' (a private network name). */
  publicEndpoint?: string | undefined;
  /** Local directory for temporary copies (inspection, image processing). */
  spoolDir: string;
}

/** lib-storage part size; memory per upload is about partSize x QUEUE. */
const PART_BYTES = 8 * 1024 * 1024;
const QUEUE = 3;

export class S3BlobStore implements BlobStore {
  readonly client: S3Client;
  readonly bucket: string;
  readonly multipart: PresignedMultipart;
  readonly spoolDir: string;

  constructor(opts: S3StoreOptions) {
    this.bucket = opts.bucket;
    this.spoolDir = opts.spoolDir;
    this.client = S3BlobStore.makeClient(opts, opts.endpoint);
    // The host is part of a presigned URL's signature: sign for the address clients will use.
    const presigner = opts.publicEndpoint ? S3BlobStore.makeClient(opts, opts.publicEndpoint) : this.client;
    this.multipart = new S3Multipart(this.client, presigner, this.bucket);
  }

  private static makeClient(opts: S3StoreOptions, endpoint: string | undefined): S3Client {
    return new S3Client({
      region: opts.region,
      ...(endpoint ? { endpoint } : {}),
      forcePathStyle: opts.forcePathStyle,
      // Without explicit keys the SDK's default chain applies (instance roles, AWS_* env, profiles).
      ...(opts.accessKeyId && opts.secretAccessKey ? { credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey } } : {}),
      // Checksums only when the operation requires one: MinIO/R2/older gateways reject the newer defaults.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 3,
    });
  }

  async put(key: string, source: Readable, opts: PutOptions): Promise<PutResult> {
    // A large body's digests in the digest threads, from the chunks as they pass (digests/streamed-digest.ts).
    const digest = new StreamedDigest();
    const head = opts.keepHead ? new HeadBytes(opts.keepHead) : null;
    let size = 0;
    let tooLarge = false;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (size > opts.maxBytes) {
          tooLarge = true;
          return done(opts.onTooLarge());
        }
        head?.update(chunk);
        // Passed on once the digest threads have room for it (a promise then; it never rejects).
        const room = digest.update(chunk);
        if (room) void room.then(() => done(null, chunk));
        else done(null, chunk);
      },
    });
    // A failing source (client gone) destroys the meter too, which fails the upload below.
    let sourceError: unknown = null;
    const body = pipeline(source, meter, (err) => {
      if (err) sourceError = err;
    });
    const upload = new Upload({ client: this.client, params: { Bucket: this.bucket, Key: key, Body: body }, partSize: PART_BYTES, queueSize: QUEUE });
    try {
      await upload.done();
    } catch (err) {
      digest.abandon();
      // lib-storage aborts its multipart upload; the object was never completed, so nothing is
      // visible under the key. Report why the stream stopped, not the follow-up abort error.
      if (tooLarge) throw opts.onTooLarge();
      throw sourceError ?? err;
    }
    if (tooLarge || sourceError) {
      // Cannot normally happen (the body ended early without an error); never leave it behind.
      digest.abandon();
      await this.delete(key);
      throw tooLarge ? opts.onTooLarge() : sourceError;
    }
    // A digest thread failed: the object is read once for its digests rather than answering a
    // digest of part of the bytes.
    const digests: BlobDigests = await digest.digest().catch(() => digestStored(this, key));
    return { size, ...digests, ...(head ? { head: head.bytes() } : {}) };
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    try {
      const out = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
      );
      if (!(out.Body instanceof Readable)) throw new Error('S3 GetObject returned no stream');
      return out.Body;
    } catch (err) {
      if (isMissing(err)) throw new BlobNotFound(key);
      throw err;
    }
  }

  async size(key: string): Promise<number | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return head.ContentLength ?? 0;
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
  }

  /** Keys under `prefix`, a page (1000) at a time. */
  async *list(prefix: string): AsyncIterable<BlobEntry> {
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) }));
      for (const o of page.Contents ?? []) if (o.Key) yield { key: o.Key, modifiedMs: o.LastModified?.getTime() ?? Date.now() };
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  /** This node's temporary local copies (spool) left by a crash. */
  sweepTemp(olderThanMs: number): Promise<number> {
    return sweepSpool(this.spoolDir, olderThanMs);
  }

  /** Readiness: the bucket exists and these credentials reach it. */
  async check(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }

  close(): void {
    this.client.destroy();
  }
}

/** Presigned multipart uploads: clients PUT parts straight to the bucket. */
class S3Multipart implements PresignedMultipart {
  constructor(private readonly client: S3Client, private readonly presigner: S3Client, private readonly bucket: string) {}

  async create(key: string, contentType: string): Promise<string> {
    const out = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ContentType: contentType }));
    if (!out.UploadId) throw new Error('S3 CreateMultipartUpload returned no UploadId');
    return out.UploadId;
  }

  partUrl(key: string, uploadId: string, partNumber: number, expiresInS: number): Promise<string> {
    // S3 caps presigned URLs at 7 days.
    const expiresIn = Math.max(1, Math.min(expiresInS, 7 * 24 * 3600));
    return getSignedUrl(this.presigner, new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, PartNumber: partNumber }), { expiresIn });
  }

  async uploadPart(key: string, uploadId: string, partNumber: number, body: Readable, size: number, signal?: AbortSignal): Promise<string> {
    const command = new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, PartNumber: partNumber, Body: body, ContentLength: size });
    const out = await this.client.send(command, signal ? { abortSignal: signal } : {});
    if (!out.ETag) throw new Error('S3 UploadPart returned no ETag');
    return out.ETag;
  }

  async listParts(key: string, uploadId: string): Promise<UploadedPart[]> {
    const parts: UploadedPart[] = [];
    let marker: string | undefined;
    for (;;) {
      const out = await this.client.send(new ListPartsCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, ...(marker ? { PartNumberMarker: marker } : {}) }));
      for (const p of out.Parts ?? []) {
        if (p.PartNumber !== undefined && p.ETag) parts.push({ partNumber: p.PartNumber, size: p.Size ?? 0, etag: p.ETag });
      }
      if (!out.IsTruncated || !out.NextPartNumberMarker) break;
      marker = out.NextPartNumberMarker;
    }
    return parts.sort((a, b) => a.partNumber - b.partNumber);
  }

  async complete(key: string, uploadId: string, parts: UploadedPart[]): Promise<void> {
    await this.client.send(
      new CompleteMultipartUploadCommand({
        Bucket: this.bucket,
        Key: key,
        UploadId: uploadId,
        MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.partNumber, ETag: p.etag })) },
      }),
    );
  }

  async abort(key: string, uploadId: string): Promise<void> {
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId }));
    } catch (err) {
      // Already completed or aborted: nothing left to clean up.
      if (!isMissing(err) && errorName(err) !== 'NoSuchUpload') throw err;
    }
  }
}

function errorName(err: unknown): string | undefined {
  return (err as { name?: string; Code?: string }).name ?? (err as { Code?: string }).Code;
}

function isMissing(err: unknown): boolean {
  const name = errorName(err);
  const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return name === 'NoSuchKey' || name === 'NotFound' || name === 'NoSuchUpload' || status === 404;
}
