/**
 * S3 multipart uploads. Each part lands where the Upload API's multipart parts land, hashed on the
 * way (MD5: the part's ETag): on disk in its slot of the upload's data file (slots.ts), on object
 * storage in the bucket's own multipart upload (bucket-parts.ts); a part that fits neither (no
 * declared length, longer than its slot) is a blob of its own. Completion commits the file under
 * the upload's key like a PutObject, with S3's multipart ETag (`<md5 of the part MD5s>-<n>`),
 * without copying when it can (assemble.ts), and drops the parts.
 * S3's limits: part numbers 1 to 10,000, parts of 5 MiB at least (but the last) and 5 GiB at most.
 * An upload not completed nor aborted is reclaimed by a job scheduled at its creation.
 */
import crypto from 'node:crypto';
import type { AppContext } from '../../context.js';
import type { FileRecord } from '../../core/file-record.js';
import { newUuid } from '../../core/ids.js';
import { nowUs } from '../../core/time.js';
import type { PutResult } from '../../blobs/store.js';
import { uuidInKey } from '../../blobs/sweep.js';
import { enqueue } from '../../jobs/queue.js';
import type { Initiator } from '../../jobs/file-events.js';
import type { ProjectRow } from '../../projects/service.js';
import { hasLocalFilesAndMove } from '../../uploads/multipart/in-place-part-store.js';
import { s3Error } from '../../http/s3/errors.js';
import { entityTooLarge, type ObjectBody } from '../body.js';
import type { ObjectService } from '../service.js';
import { assembleParts } from './assemble.js';
import { BucketParts } from './bucket-parts.js';
import { MultipartRepo, type PartRow, type UploadRow } from './repo.js';
import { SlotParts } from './slots.js';

export const S3_MULTIPART_EXPIRE_JOB = 's3.multipart.expire';
export const MIN_PART_BYTES = 5 * 1024 ** 2;
export const MAX_PART_BYTES = 5 * 1024 ** 3;
export const MAX_PARTS = 10_000;
export const PARTS_PREFIX = 's3-multipart/';

export const noSuchUpload = () => s3Error(404, 'NoSuchUpload', 'The specified multipart upload does not exist. The upload ID might be invalid, or the multipart upload might have been aborted or completed.');
const invalidPart = (message: string) => s3Error(400, 'InvalidPart', message);
const missingLength = () => s3Error(411, 'MissingContentLength', 'You must provide the Content-Length HTTP header.');

/** A part as CompleteMultipartUpload names it. */
export interface ChosenPart {
  partNumber: number;
  etag: string;
}

type StoredPart = Pick<PartRow, 'size' | 'md5' | 'blob_key' | 'place' | 'store_etag'>;

export class S3Multipart {
  readonly repo: MultipartRepo;
  /** Object storage: parts go to the bucket's multipart upload. */
  private readonly bucket: BucketParts | null;
  /** Local files: parts go to their slot in the upload's data file. */
  private readonly slots: SlotParts | null;

  constructor(private readonly ctx: AppContext, private readonly objects: ObjectService) {
    this.repo = new MultipartRepo(ctx.db);
    const blobs = ctx.blobs;
    this.bucket = blobs.multipart ? new BucketParts(blobs, blobs.multipart) : null;
    this.slots = !this.bucket && hasLocalFilesAndMove(blobs) ? new SlotParts(blobs, PARTS_PREFIX) : null;
  }

  async create(project: ProjectRow, key: string, contentType: string | null, metadata: Record<string, string>): Promise<string> {
    // The upload id is also the uuid of the file it completes into (its blob key is known from now).
    const uploadId = newUuid();
    const created = nowUs();
    const expires = created + this.ctx.config.multipartTtlMs * 1000;
    const storeUploadId = this.bucket ? await this.bucket.start(uploadId) : null;
    try {
      await this.ctx.db.transaction(async (trx) => {
        const row = { upload_id: uploadId, project_id: project.id, object_key: key, content_type: contentType ?? '', metadata: JSON.stringify(metadata), created_us: created, expires_us: expires };
        await this.repo.insert(trx, { ...row, slot_bytes: null, store_upload_id: storeUploadId });
        // The reclaim is durable from the start: it runs at expiry whatever happens to this node.
        await enqueue(trx, { kind: S3_MULTIPART_EXPIRE_JOB, payload: { uploadId }, runAtUs: expires, uniqueKey: `s3-multipart-expire:${uploadId}` });
      });
    } catch (err) {
      if (this.bucket && storeUploadId) await this.bucket.abort(uploadId, storeUploadId).catch(() => undefined);
      throw err;
    }
    return uploadId;
  }

  /** The open upload `uploadId` of this project and key, or NoSuchUpload. */
  async open(projectId: number, key: string, uploadId: string): Promise<UploadRow> {
    const row = /^[0-9a-f-]{36}$/.test(uploadId) ? await this.repo.get(uploadId) : undefined;
    if (!row || Number(row.project_id) !== projectId || row.object_key !== key || Number(row.expires_us) < nowUs()) throw noSuchUpload();
    return row;
  }

  /** Stores part `partNumber` (a retry replaces it); answers its MD5, the part's ETag. */
  async uploadPart(upload: UploadRow, partNumber: number, body: ObjectBody): Promise<string> {
    const id = upload.upload_id;
    const before = await this.repo.part(id, partNumber);
    let stored: StoredPart | null = null;
    if (this.bucket && upload.store_upload_id) {
      if (body.length === null) throw missingLength();
      // Rewritten where it is: the old row goes first, so a part being replaced is missing, never half old.
      if (before) await this.repo.deletePart(id, partNumber);
      const { put, storeEtag } = await this.bucket.write(id, upload.store_upload_id, partNumber, body.source, body.length, entityTooLarge);
      stored = this.checked(body, put, { blob_key: '', place: 'bucket', store_etag: storeEtag });
    } else if (this.slots && body.length !== null && body.length > 0) {
      const slot = upload.slot_bytes === null ? await this.repo.fixSlot(id, body.length) : Number(upload.slot_bytes);
      if (slot !== null && SlotParts.fits(slot, partNumber, body.length)) {
        if (before) await this.repo.deletePart(id, partNumber);
        const put = await this.slots.write(id, partNumber, slot, body.source, entityTooLarge);
        if (put) stored = this.checked(body, put, { blob_key: this.slots.dataKey(id), place: 'slot', store_etag: null });
      }
    }
    stored ??= await this.toOwnBlob(id, partNumber, body);
    // Aborted or completed while the part arrived: the part belongs to nothing.
    if (!(await this.repo.get(id))) {
      await this.dropParts([stored], { uploadId: id, storeUploadId: null });
      throw noSuchUpload();
    }
    await this.repo.putPart({ upload_id: id, part_number: partNumber, uploaded_us: nowUs(), ...stored });
    if (before?.place === 'blob' && before.blob_key !== stored.blob_key) await this.ctx.blobs.delete(before.blob_key).catch(() => undefined);
    return stored.md5;
  }

  /** The part's row fields once its bytes are checked against the request (a mismatch: S3's error, no row). */
  private checked(body: ObjectBody, put: PutResult, where: Omit<StoredPart, 'size' | 'md5'>): StoredPart {
    body.verify(put);
    return { size: put.size, md5: put.md5, ...where };
  }

  private async toOwnBlob(uploadId: string, partNumber: number, body: ObjectBody): Promise<StoredPart> {
    const blobKey = `${PARTS_PREFIX}${uploadId.slice(0, 2)}/${uploadId}/${partNumber}.${crypto.randomBytes(6).toString('hex')}`;
    const put = await this.ctx.blobs.put(blobKey, body.source, { maxBytes: MAX_PART_BYTES, onTooLarge: entityTooLarge, fresh: true });
    try {
      return this.checked(body, put, { blob_key: blobKey, place: 'blob', store_etag: null });
    } catch (err) {
      await this.ctx.blobs.delete(blobKey).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Assembles the chosen parts into a new file under the upload's key (replacing the file that held
   * it), then forgets the upload. Answers the file and its multipart ETag.
   */
  async complete(project: ProjectRow, upload: UploadRow, chosen: ChosenPart[], initiator: Initiator): Promise<{ file: FileRecord; etag: string }> {
    // No part is written into the data file from here on (a write in flight is waited for).
    const release = this.slots ? await this.slots.hold(upload.upload_id) : () => undefined;
    try {
      const parts = await this.checkParts(upload, chosen);
      const etag = `${crypto.createHash('md5').update(Buffer.concat(parts.map((p) => Buffer.from(p.md5, 'hex')))).digest('hex')}-${parts.length}`;
      const assembled = await assembleParts(this.ctx, { bucket: this.bucket, slots: this.slots }, upload, parts);
      let file: FileRecord;
      try {
        file = await this.objects.commit(project, assembled.staged, {
          key: upload.object_key,
          contentType: upload.content_type === '' ? null : upload.content_type,
          metadata: JSON.parse(upload.metadata) as Record<string, string>,
          initiator,
          etag,
        });
      } catch (err) {
        await assembled.undo().catch(() => undefined);
        throw err;
      }
      await this.forget(upload.upload_id, { completed: true });
      return { file, etag };
    } finally {
      release();
    }
  }

  /** The parts CompleteMultipartUpload names, in order, each uploaded with that ETag, all but the last at least 5 MiB. */
  private async checkParts(upload: UploadRow, chosen: ChosenPart[]): Promise<PartRow[]> {
    if (chosen.length === 0 || chosen.length > MAX_PARTS) throw s3Error(400, 'MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema.');
    const uploaded = new Map((await this.repo.parts(upload.upload_id)).map((p) => [p.part_number, p]));
    const parts: PartRow[] = [];
    let previous = 0;
    for (const c of chosen) {
      if (c.partNumber <= previous) throw s3Error(400, 'InvalidPartOrder', 'The list of parts was not in ascending order. The parts list must be specified in order by part number.');
      previous = c.partNumber;
      const part = uploaded.get(c.partNumber);
      if (!part || c.etag.replace(/"/g, '').trim().toLowerCase() !== part.md5) throw invalidPart(`Part ${c.partNumber} could not be found or its ETag does not match.`);
      parts.push(part);
    }
    const small = parts.slice(0, -1).find((p) => Number(p.size) < MIN_PART_BYTES);
    if (small) throw s3Error(400, 'EntityTooSmall', `Your proposed upload is smaller than the minimum allowed size: part ${small.part_number} is under 5 MiB and not the last.`);
    return parts;
  }

  /**
   * AbortMultipartUpload, a completion's cleanup, and the expiry job: the upload and its parts are
   * gone (idempotent). A completed upload's bucket upload is the object now: it is not aborted.
   */
  async forget(uploadId: string, o: { completed: boolean } = { completed: false }): Promise<void> {
    const upload = await this.repo.get(uploadId);
    const blobKeys = await this.ctx.db.transaction((trx) => this.repo.delete(trx, uploadId));
    await this.dropParts(
      blobKeys.map((k) => ({ place: 'blob', blob_key: k })),
      o.completed ? null : { uploadId, storeUploadId: upload?.store_upload_id ?? null },
    );
  }

  /** Removes parts' blobs, and with `whole`, the upload's data file and bucket upload too. */
  private async dropParts(parts: Array<Pick<StoredPart, 'place' | 'blob_key'>>, whole: { uploadId: string; storeUploadId: string | null } | null): Promise<void> {
    const work = parts.filter((p) => p.place === 'blob').map((p) => this.ctx.blobs.delete(p.blob_key));
    if (whole && this.slots) work.push(this.slots.remove(whole.uploadId));
    if (whole?.storeUploadId && this.bucket) work.push(this.bucket.abort(whole.uploadId, whole.storeUploadId));
    await Promise.all(work.map((w) => w.catch(() => undefined)));
  }

  /**
   * Of `keys` under `prefix` (parts under s3-multipart/, an upload's file under files/ between its
   * bucket's completion and its row), those of an upload that still has its row; keys naming no
   * upload are left alone.
   */
  async referencedKeys(keys: string[], prefix: string): Promise<Set<string>> {
    const kept = new Set<string>();
    const byUpload = new Map<string, string[]>();
    for (const key of keys) {
      const id = uuidInKey(key, prefix);
      if (!id) kept.add(key);
      else byUpload.set(id, [...(byUpload.get(id) ?? []), key]);
    }
    for (const id of await this.repo.existing([...byUpload.keys()])) for (const key of byUpload.get(id) ?? []) kept.add(key);
    return kept;
  }
}
