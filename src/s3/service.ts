/**
 * Objects are files: the S3 surface's operations on a project's files, through FileService for
 * every change (so uploads, removals and their events are those of any other API) and the
 * feature's repository for the reads by key.
 */
import type { Readable } from 'node:stream';
import type { ByteRange } from '../blobs/store.js';
import type { AppContext } from '../context.js';
import type { ReadOriginal } from '../feature.js';
import type { FileRecord } from '../core/file-record.js';
import type { Initiator } from '../jobs/file-events.js';
import type { ProjectRow } from '../projects/service.js';
import { s3Error } from '../http/s3/errors.js';
import { ObjectKeys } from './object-keys.js';
import { objectOfFile, ObjectRepo, type KeyRange, type ObjectRow } from './repo.js';

export const noSuchKey = () => s3Error(404, 'NoSuchKey', 'The specified key does not exist.');

export interface NewObject {
  key: string;
  contentType: string | null;
  metadata: Record<string, string>;
  initiator: Initiator;
  /** The ETag of an object assembled from parts (`<md5 of part md5s>-<n>`). */
  etag?: string;
}

export class ObjectService {
  readonly repo: ObjectRepo;
  private readonly keys: ObjectKeys;

  constructor(
    private readonly ctx: AppContext,
    /** Small objects' bytes from the node's originals cache (shared with the CDN's raw delivery). */
    readonly readOriginal: ReadOriginal,
  ) {
    this.repo = new ObjectRepo(ctx.db);
    this.keys = new ObjectKeys(() => ctx.db.changeStamp(), async (projectId, key) => (await this.repo.byKey(projectId, key))?.uuid ?? null);
  }

  /** The object under `key`: its file found by key (object-keys.ts), its row from the file row cache. */
  async get(projectId: number, key: string): Promise<ObjectRow> {
    const uuid = await this.keys.uuidOf(projectId, key);
    const file = uuid === null ? null : await this.ctx.files.current(uuid);
    const found = file === null ? null : objectOfFile(file);
    // The row is read after the key: a change in between shows here as another key or a removal.
    if (found === null || file?.projectId !== projectId || file.removedUs !== null || found.key !== key) throw noSuchKey();
    return found;
  }

  /**
   * What `get` would answer from this node's memory alone, without a promise: the key's entry and
   * the file's row both as of one change stamp read now; undefined when `get` would read the store
   * (or answer NoSuchKey).
   */
  cached(projectId: number, key: string): ObjectRow | undefined {
    const stamp = this.keys.now();
    if (stamp === null) return undefined;
    const uuid = this.keys.uuidAt(projectId, key, stamp);
    const file = typeof uuid === 'string' ? this.ctx.files.currentAt(uuid, stamp) : undefined;
    if (file == null || file.projectId !== projectId || file.removedUs !== null) return undefined;
    const found = objectOfFile(file);
    return found.key === key ? found : undefined;
  }

  /**
   * Streams `source` into the blob store and commits it as a new file under `key` (replacing the
   * file that held it, in the same transaction). `check` runs once the bytes are stored (payload
   * hash, Content-MD5): a failure discards them.
   */
  async put(project: ProjectRow, source: Readable, maxBytes: number, onTooLarge: () => Error, o: NewObject, check: (put: { md5: string; sha256: string | null }) => void): Promise<FileRecord> {
    const staged = await this.ctx.files.stage(source, maxBytes, onTooLarge);
    try {
      check(staged);
    } catch (err) {
      await this.ctx.files.discard([staged]);
      throw err;
    }
    return this.commit(project, staged, o);
  }

  /** The second half of `put`, for bytes already staged (a multipart completion). */
  commit(project: ProjectRow, staged: Parameters<AppContext['files']['commit']>[1], o: NewObject): Promise<FileRecord> {
    return this.ctx.files.commit(project, staged, {
      originalFilename: o.key.slice(o.key.lastIndexOf('/') + 1),
      declaredType: o.contentType,
      store: 'auto',
      metadata: o.metadata,
      initiator: o.initiator,
      objectKey: o.key,
      ...(o.etag !== undefined ? { objectEtag: o.etag } : {}),
    });
  }

  /** Removes the object's file; a key naming nothing is no error (S3 answers 204 either way). */
  async delete(projectId: number, key: string, initiator: Initiator): Promise<void> {
    const found = await this.repo.byKey(projectId, key);
    if (!found) return;
    await this.ctx.files.remove(projectId, found.uuid, initiator).catch((err: unknown) => {
      // Removed meanwhile by another request: the outcome the client asked for.
      if ((err as { status?: number }).status !== 404) throw err;
    });
  }

  /** DeleteObjects: every key's file removed in one batch; keys naming nothing count as deleted. */
  async deleteMany(projectId: number, keys: string[], initiator: Initiator): Promise<void> {
    const found = await Promise.all(keys.map((k) => this.repo.byKey(projectId, k)));
    const uuids = found.flatMap((o) => (o ? [o.uuid] : []));
    if (uuids.length > 0) await this.ctx.files.batch(projectId, uuids, 'remove', initiator);
  }

  /** The bytes of an object, or a range of them, streamed from the store (CopyObject, UploadPartCopy). */
  async read(o: ObjectRow, range?: ByteRange): Promise<Readable> {
    if (!o.blobKey) throw noSuchKey();
    return this.ctx.blobs.get(o.blobKey, range);
  }

  page(projectId: number, range: KeyRange, limit: number): Promise<[ObjectRow[], ObjectRow[]]> {
    return Promise.all([this.repo.keyed(projectId, range, limit), this.repo.unkeyed(projectId, range, limit)]);
  }
}
