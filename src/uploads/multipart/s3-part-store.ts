/**
 * Multipart parts straight to the bucket (blob stores with the PresignedMultipart ability, i.e.
 * S3): /multipart/start/ creates an S3 multipart upload for the file's final blob key and hands out
 * presigned UploadPart URLs, so part bytes never pass through a node. Part sizes come from
 * ListParts; completion is CompleteMultipartUpload. The S3 upload id is kept next to the parts, in a
 * tiny object in the bucket, so any node can complete or abort the upload without a schema change.
 */
import { Readable } from 'node:stream';
import type { BlobStore, PresignedMultipart, PutResult } from '../../blobs/store.js';
import { BlobNotFound } from '../../blobs/store.js';
import { digestStored } from '../../digests/streamed-digest.js';
import { fileBlobKey } from '../../core/file-record.js';
import type { MultipartStore, PartTarget, StoredPart } from './part-store.js';

export class S3PartStore implements MultipartStore {
  readonly acceptsParts = false;

  constructor(private readonly blobs: BlobStore, private readonly mp: PresignedMultipart) {}

  private static idKey(uuid: string): string {
    return `multipart/${uuid.slice(0, 2)}/${uuid}/upload-id`;
  }

  private async uploadId(uuid: string): Promise<string | null> {
    try {
      const chunks: Buffer[] = [];
      for await (const c of await this.blobs.get(S3PartStore.idKey(uuid))) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString('utf8') || null;
    } catch (err) {
      if (err instanceof BlobNotFound) return null;
      throw err;
    }
  }

  async partUrls(t: PartTarget, expiresAtS: number): Promise<string[]> {
    const key = fileBlobKey(t.uuid);
    const id = await this.mp.create(key, 'application/octet-stream');
    await this.blobs.put(S3PartStore.idKey(t.uuid), Readable.from([Buffer.from(id)]), { maxBytes: 4096, onTooLarge: () => new Error('upload id too long') });
    const ttl = expiresAtS - Math.floor(Date.now() / 1000);
    const urls: string[] = [];
    for (let n = 1; n <= t.parts; n++) urls.push(await this.mp.partUrl(key, id, n, ttl));
    return urls;
  }

  async verifyPartUrl(): Promise<boolean> {
    return false;
  }

  writePart(): Promise<StoredPart> {
    return Promise.reject(new Error('parts go straight to object storage'));
  }

  async partSizes(t: PartTarget): Promise<Array<number | null>> {
    const id = await this.uploadId(t.uuid);
    const sizes: Array<number | null> = Array.from({ length: t.parts }, () => null);
    if (!id) return sizes;
    for (const p of await this.mp.listParts(fileBlobKey(t.uuid), id)) {
      if (p.partNumber >= 1 && p.partNumber <= t.parts) sizes[p.partNumber - 1] = p.size;
    }
    return sizes;
  }

  /**
   * Completes the S3 upload into `destKey` (the file's blob key, fixed at start), then reads the
   * object once for its MD5 and SHA-256 (S3's multipart ETag is not an MD5; the parts never passed
   * through a node to be hashed on the way).
   */
  async assemble(t: PartTarget, destKey: string, expectedBytes: number, onTooLarge: () => Error): Promise<PutResult> {
    if (destKey !== fileBlobKey(t.uuid)) throw new Error('S3 multipart completes into the key chosen at start');
    const id = await this.uploadId(t.uuid);
    if (!id) throw new BlobNotFound(destKey);
    const parts = (await this.mp.listParts(destKey, id)).filter((p) => p.partNumber <= t.parts);
    await this.mp.complete(destKey, id, parts);
    const put = await digestStored(this.blobs, destKey);
    if (put.size > expectedBytes) {
      await this.blobs.delete(destKey);
      throw onTooLarge();
    }
    return put;
  }

  async removeParts(t: PartTarget): Promise<void> {
    const id = await this.uploadId(t.uuid);
    if (id) await this.mp.abort(fileBlobKey(t.uuid), id);
    await this.blobs.delete(S3PartStore.idKey(t.uuid));
  }
}
