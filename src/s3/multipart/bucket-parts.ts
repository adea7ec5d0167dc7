/**
 * Parts straight into the bucket, on object storage (a blob store with the PresignedMultipart
 * ability): CreateMultipartUpload starts the bucket's own multipart upload for the new file's blob
 * key, each UploadPart streams through the node into the bucket's part of the same number (hashed on
 * the way, hashed-part.ts), and completion is the bucket's CompleteMultipartUpload: the bucket
 * assembles the object, no byte passes through the node again (the Upload API's multipart does the
 * same with presigned part URLs, uploads/multipart/s3-part-store.ts).
 */
import type { Readable } from 'node:stream';
import type { BlobStore, PresignedMultipart, PutResult } from '../../blobs/store.js';
import { digestStored } from '../../digests/streamed-digest.js';
import { fileBlobKey } from '../../core/file-record.js';
import { hashedPart } from './hashed-part.js';

/** A part as the completion sees it. */
export interface BucketPart {
  part_number: number;
  size: number;
  store_etag: string | null;
}

export class BucketParts {
  constructor(private readonly blobs: BlobStore, private readonly mp: PresignedMultipart) {}

  /** The bucket's upload for the file `uploadId` will become (its uuid): answers its id. */
  start(uploadId: string): Promise<string> {
    return this.mp.create(fileBlobKey(uploadId), 'application/octet-stream');
  }

  /** Sends part `partNumber`, exactly `size` bytes of `body`; answers its digests and the bucket's ETag. */
  async write(uploadId: string, storeUploadId: string, partNumber: number, body: Readable, size: number, onTooLarge: () => Error): Promise<{ put: PutResult; storeEtag: string }> {
    const part = hashedPart(body, size, onTooLarge);
    try {
      const storeEtag = await this.mp.uploadPart(fileBlobKey(uploadId), storeUploadId, partNumber, part.stream, size, part.signal);
      return { put: await part.result(), storeEtag };
    } catch (err) {
      part.abandon();
      throw part.failure() ?? err;
    }
  }

  /**
   * Completes the bucket's upload with `parts` (a completion whose commit failed after the bucket's
   * completed left the whole object: it is taken as it is), then its digests: read once, unless
   * `digestsLater` (a job computes them after the answer).
   */
  async complete(uploadId: string, storeUploadId: string, parts: BucketPart[], digestsLater: boolean): Promise<PutResult> {
    const key = fileBlobKey(uploadId);
    const total = parts.reduce((n, p) => n + Number(p.size), 0);
    if ((await this.blobs.size(key)) !== total) {
      await this.mp.complete(key, storeUploadId, parts.map((p) => ({ partNumber: p.part_number, size: Number(p.size), etag: p.store_etag ?? '' })));
    }
    if (digestsLater) return { size: total, md5: '', sha256: null };
    return digestStored(this.blobs, key);
  }

  /** Drops the bucket's upload and its parts (already gone: nothing to do). */
  abort(uploadId: string, storeUploadId: string): Promise<void> {
    return this.mp.abort(fileBlobKey(uploadId), storeUploadId);
  }
}
