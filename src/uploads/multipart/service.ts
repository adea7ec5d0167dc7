/**
 * Multipart uploads (wire-reference §1.8): start records the upload and hands out part URLs,
 * parts land in the MultipartStore, complete checks the sizes and streams the parts into the file's
 * blob under the uuid announced at start, then commits the row like any other upload.
 * Unfinished uploads are reclaimed by a job scheduled at start for their expiry time.
 */
import type { PutResult } from '../../blobs/store.js';
import { digestStored } from '../../digests/streamed-digest.js';
import type { AppContext } from '../../context.js';
import { apiInitiator } from '../../jobs/file-events.js';
import { fileBlobKey, type FileRecord, type StoreChoice } from '../../core/file-record.js';
import type { ProjectRow } from '../../projects/service.js';
import { newUuid } from '../../core/ids.js';
import { nowUs } from '../../core/time.js';
import { enqueue } from '../../jobs/queue.js';
import type { MultipartStore, PartTarget } from './part-store.js';
import { alreadyUploaded, CompletionClaim, completionInProgress } from './claim.js';
import { MultipartRepo, type MultipartRow } from './repo.js';
import { uuidInKey } from '../../blobs/sweep.js';
import { uploadErrors } from '../../core/error-catalogue/upload.js';

export const MULTIPART_EXPIRE_JOB = 'multipart.expire';
export const MIN_FILE_BYTES = 10_485_760;
export const MIN_PART_BYTES = 5_242_880;
export const MAX_PART_BYTES = 5_368_709_120;

export interface StartRequest {
  filename: string;
  contentType: string;
  size: number;
  partSize: number;
  store: StoreChoice;
  metadata: Record<string, string>;
  tags: string[];
}

export const notFound = uploadErrors.multipartNotFound;
const tooSmall = uploadErrors.multipartTooSmall;
const tooLarge = uploadErrors.multipartTooLarge;
const wrongParts = uploadErrors.multipartWrongParts;

export class MultipartService {
  private readonly repo: MultipartRepo;

  constructor(private readonly ctx: AppContext, readonly store: MultipartStore) {
    this.repo = new MultipartRepo(ctx.db);
  }

  async start(project: ProjectRow, r: StartRequest): Promise<{ uuid: string; parts: string[] }> {
    const uuid = newUuid();
    const parts = Math.ceil(r.size / r.partSize);
    const created = nowUs();
    const expires = created + this.ctx.config.multipartTtlMs * 1000;
    await this.ctx.db.transaction(async (trx) => {
      await this.repo.insert(trx, {
        uuid,
        project_id: project.id,
        filename: r.filename,
        content_type: r.contentType,
        size: r.size,
        part_size: r.partSize,
        parts,
        store: r.store === 'auto' ? 'auto' : r.store ? '1' : '0',
        metadata: JSON.stringify(r.metadata),
        tags: JSON.stringify(r.tags),
        state: 'open',
        claimed_us: null,
        created_us: created,
        expires_us: expires,
      });
      // The reclaim is durable from the start: it runs at expiry whatever happens to this node.
      await enqueue(trx, { kind: MULTIPART_EXPIRE_JOB, payload: { uuid, parts }, runAtUs: expires, uniqueKey: `multipart-expire:${uuid}` });
    });
    return { uuid, parts: await this.store.partUrls({ uuid, parts }, Math.floor(expires / 1_000_000)) };
  }

  /** The open upload a part belongs to; 404 when unknown or expired, 400 once completed. */
  async openUpload(uuid: string, projectId?: number): Promise<MultipartRow> {
    const row = await this.repo.get(uuid, projectId);
    if (!row || Number(row.expires_us) < nowUs()) throw notFound();
    if (row.state === 'done') throw alreadyUploaded();
    return row;
  }

  /**
   * A part may still be written: the upload is open, not being completed (503, retry later:
   * a completion reads the parts in place) nor done (400).
   */
  async ensureAcceptingParts(uuid: string): Promise<void> {
    const row = await this.repo.claimState(uuid);
    if (!row) throw notFound();
    if (row.state === 'done') throw alreadyUploaded();
    if (row.state === 'completing') throw completionInProgress(1);
  }

  /**
   * One completion at a time (CompletionClaim). A completion that takes over from a dead one
   * finishes its work instead of redoing it: the file row it committed, or the whole file it
   * assembled (puts are atomic, and with object storage the parts are gone once assembled).
   */
  async complete(project: ProjectRow, uuid: string, requestId: string): Promise<FileRecord> {
    const row = await this.openUpload(uuid, project.id);
    const leaseMs = this.ctx.config.multipartClaimLeaseMs;
    const claim = await CompletionClaim.take(this.repo, uuid, leaseMs, notFound);
    claim.startHeartbeat(leaseMs);
    const target: PartTarget = { uuid, parts: Number(row.parts) };
    let file: FileRecord;
    try {
      const committed = claim.tookOver ? await this.ctx.files.find(project.id, uuid) : null;
      file = committed ?? (await this.assembleAndCommit(project, row, target, claim, requestId));
    } catch (err) {
      // Let the client fix the parts and try again.
      await claim.release('open');
      throw err;
    }
    await claim.release('done');
    await this.store.removeParts(target);
    this.ctx.worker.poke();
    return file;
  }

  private async assembleAndCommit(project: ProjectRow, row: MultipartRow, target: PartTarget, claim: CompletionClaim, requestId: string): Promise<FileRecord> {
    const size = Number(row.size);
    const blobKey = fileBlobKey(row.uuid);
    const put = (claim.tookOver ? await this.assembledBefore(blobKey, size) : null) ?? (await this.assemble(row, target, blobKey, size));
    // Never commit (nor, on failure, discard the bytes) after another completion took over.
    await claim.ensureHeld();
    return this.ctx.files.commit(project, { uuid: row.uuid, blobKey, size: put.size, md5: put.md5, sha256: put.sha256 }, {
      originalFilename: row.filename,
      declaredType: row.content_type,
      store: row.store === 'auto' ? 'auto' : row.store === '1',
      metadata: JSON.parse(row.metadata) as Record<string, string>,
      tags: JSON.parse(row.tags) as string[],
      initiator: apiInitiator(requestId),
    });
  }

  private async assemble(row: MultipartRow, target: PartTarget, blobKey: string, size: number): Promise<PutResult> {
    await this.checkSizes(row, target);
    const put = await this.store.assemble(target, blobKey, size, tooLarge);
    if (put.size !== size) {
      await this.ctx.blobs.delete(blobKey);
      throw tooSmall();
    }
    return put;
  }

  /** The whole file a dead completion assembled under its key, or null. */
  private async assembledBefore(blobKey: string, size: number): Promise<PutResult | null> {
    if ((await this.ctx.blobs.size(blobKey)) !== size) return null;
    return digestStored(this.ctx.blobs, blobKey);
  }

  private async checkSizes(row: MultipartRow, target: PartTarget): Promise<void> {
    const sizes = await this.store.partSizes(target);
    const partSize = Number(row.part_size);
    let total = 0;
    for (const s of sizes) total += s ?? 0;
    if (total > Number(row.size)) throw tooLarge();
    if (sizes.some((s) => s === null) || total < Number(row.size)) throw tooSmall();
    // Right total but a short middle part (and so a long last one): the bytes are misplaced.
    if (sizes.slice(0, -1).some((s) => s !== partSize)) throw wrongParts();
  }

  /**
   * Of `keys` under `prefix` (its parts under multipart/, its file under files/ while completing),
   * those of an upload that still has its row; keys naming no upload are left alone.
   */
  async referencedKeys(keys: string[], prefix: string): Promise<Set<string>> {
    const kept = new Set<string>();
    const byUuid = new Map<string, string[]>();
    for (const key of keys) {
      const uuid = uuidInKey(key, prefix);
      if (!uuid) kept.add(key);
      else byUuid.set(uuid, [...(byUuid.get(uuid) ?? []), key]);
    }
    if (byUuid.size === 0) return kept;
    for (const uuid of await this.repo.existing([...byUuid.keys()])) for (const key of byUuid.get(uuid) ?? []) kept.add(key);
    return kept;
  }

  /** Job body: drop the parts and forget the upload. Idempotent. */
  async expire(uuid: string, parts: number): Promise<void> {
    await this.repo.delete(uuid);
    await this.store.removeParts({ uuid, parts });
  }
}
