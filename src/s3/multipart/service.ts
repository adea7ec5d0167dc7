/**
 * S3 multipart uploads: each part is a blob of its own, written as it arrives (MD5 and SHA-256
 * computed on the way, its MD5 the part's ETag); completion streams the chosen parts, in order,
 * into a new file's blob (constant memory), commits the file under the upload's key like a
 * PutObject, with S3's multipart ETag (`<md5 of the part MD5s>-<n>`), and drops the parts.
 * S3's limits: part numbers 1 to 10,000, parts of 5 MiB at least (but the last) and 5 GiB at most.
 * An upload not completed nor aborted is reclaimed by a job scheduled at its creation.
 */
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import type { AppContext } from '../../context.js';
import type { FileRecord } from '../../core/file-record.js';
import { newUuid } from '../../core/ids.js';
import { nowUs } from '../../core/time.js';
import { uuidInKey } from '../../blobs/sweep.js';
import { digestsLaterFor } from '../../digests/digest.js';
import { enqueue } from '../../jobs/queue.js';
import type { Initiator } from '../../jobs/file-events.js';
import type { ProjectRow } from '../../projects/service.js';
import { s3Error } from '../../http/s3/errors.js';
import { entityTooLarge, type ObjectBody } from '../body.js';
import type { ObjectService } from '../service.js';
import { MultipartRepo, type PartRow, type UploadRow } from './repo.js';

export const S3_MULTIPART_EXPIRE_JOB = 's3.multipart.expire';
export const MIN_PART_BYTES = 5 * 1024 ** 2;
export const MAX_PART_BYTES = 5 * 1024 ** 3;
export const MAX_PARTS = 10_000;
export const PARTS_PREFIX = 's3-multipart/';

export const noSuchUpload = () => s3Error(404, 'NoSuchUpload', 'The specified multipart upload does not exist. The upload ID might be invalid, or the multipart upload might have been aborted or completed.');
const invalidPart = (message: string) => s3Error(400, 'InvalidPart', message);

/** A part as CompleteMultipartUpload names it. */
export interface ChosenPart {
  partNumber: number;
  etag: string;
}

export class S3Multipart {
  readonly repo: MultipartRepo;

  constructor(private readonly ctx: AppContext, private readonly objects: ObjectService) {
    this.repo = new MultipartRepo(ctx.db);
  }

  async create(project: ProjectRow, key: string, contentType: string | null, metadata: Record<string, string>): Promise<string> {
    const uploadId = newUuid();
    const created = nowUs();
    const expires = created + this.ctx.config.multipartTtlMs * 1000;
    await this.ctx.db.transaction(async (trx) => {
      await this.repo.insert(trx, { upload_id: uploadId, project_id: project.id, object_key: key, content_type: contentType ?? '', metadata: JSON.stringify(metadata), created_us: created, expires_us: expires });
      // The reclaim is durable from the start: it runs at expiry whatever happens to this node.
      await enqueue(trx, { kind: S3_MULTIPART_EXPIRE_JOB, payload: { uploadId }, runAtUs: expires, uniqueKey: `s3-multipart-expire:${uploadId}` });
    });
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
    const blobKey = `${PARTS_PREFIX}${upload.upload_id.slice(0, 2)}/${upload.upload_id}/${partNumber}.${crypto.randomBytes(6).toString('hex')}`;
    const put = await this.ctx.blobs.put(blobKey, body.source, { maxBytes: MAX_PART_BYTES, onTooLarge: entityTooLarge, fresh: true });
    try {
      body.verify(put);
      // Aborted or completed while the part arrived: the part belongs to nothing.
      if (!(await this.repo.get(upload.upload_id))) throw noSuchUpload();
      const before = (await this.repo.parts(upload.upload_id, partNumber - 1, 1)).find((p) => p.part_number === partNumber);
      await this.repo.putPart({ upload_id: upload.upload_id, part_number: partNumber, size: put.size, md5: put.md5, blob_key: blobKey, uploaded_us: nowUs() });
      if (before) await this.ctx.blobs.delete(before.blob_key).catch(() => undefined);
    } catch (err) {
      await this.ctx.blobs.delete(blobKey).catch(() => undefined);
      throw err;
    }
    return put.md5;
  }

  /**
   * Assembles the chosen parts into a new file under the upload's key (replacing the file that held
   * it), then forgets the upload. Answers the file and its multipart ETag.
   */
  async complete(project: ProjectRow, upload: UploadRow, chosen: ChosenPart[], initiator: Initiator): Promise<{ file: FileRecord; etag: string }> {
    const parts = await this.checkParts(upload, chosen);
    const blobs = this.ctx.blobs;
    async function* concat(): AsyncGenerator<Buffer> {
      for (const part of parts) for await (const chunk of await blobs.get(part.blob_key)) yield chunk as Buffer;
    }
    const total = parts.reduce((n, p) => n + Number(p.size), 0);
    // A large file is answered before its MD5 and SHA-256, as a large /base/ upload is (a job computes
    // them): the object's ETag is the multipart one, known from the parts already.
    const later = digestsLaterFor(this.ctx.config.digestLaterBytes, total);
    const staged = await this.ctx.files.stage(Readable.from(concat(), { objectMode: false }), total, entityTooLarge, undefined, later);
    const etag = `${crypto.createHash('md5').update(Buffer.concat(parts.map((p) => Buffer.from(p.md5, 'hex')))).digest('hex')}-${parts.length}`;
    const file = await this.objects.commit(project, staged, {
      key: upload.object_key,
      contentType: upload.content_type === '' ? null : upload.content_type,
      metadata: JSON.parse(upload.metadata) as Record<string, string>,
      initiator,
      etag,
    });
    await this.forget(upload.upload_id);
    return { file, etag };
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

  /** AbortMultipartUpload, and the expiry job: the upload and its parts are gone (idempotent). */
  async forget(uploadId: string): Promise<void> {
    const blobKeys = await this.ctx.db.transaction((trx) => this.repo.delete(trx, uploadId));
    await Promise.all(blobKeys.map((k) => this.ctx.blobs.delete(k).catch(() => undefined)));
  }

  /** Of `keys` under the parts prefix, those of an upload that still has its row (the leftovers sweep keeps them). */
  async referencedKeys(keys: string[]): Promise<Set<string>> {
    const kept = new Set<string>();
    const byUpload = new Map<string, string[]>();
    for (const key of keys) {
      const id = uuidInKey(key, PARTS_PREFIX);
      if (!id) kept.add(key);
      else byUpload.set(id, [...(byUpload.get(id) ?? []), key]);
    }
    for (const id of await this.repo.existing([...byUpload.keys()])) for (const key of byUpload.get(id) ?? []) kept.add(key);
    return kept;
  }
}
