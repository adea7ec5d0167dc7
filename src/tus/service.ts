/**
 * tus uploads (docs/tus.md): creation records the upload and its staging file, each PATCH appends
 * to the staging file and moves the durable offset only after an fsync, and the chunk that
 * reaches Upload-Length turns the staged bytes into an ordinary file (blob store put, then
 * FileService.commit with the usual events). Expired uploads are swept by a periodic job.
 */
import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import type { AppContext } from '../context.js';
import { digestsLaterFor } from '../digests/digest.js';
import { isAppError } from '../core/errors.js';
import { fileBlobKey, type FileRecord, type StoreChoice } from '../core/file-record.js';
import { nowUs } from '../core/time.js';
import { apiInitiator } from '../jobs/file-events.js';
import type { ProjectRow } from '../projects/service.js';
import { freeBytes } from '../http/common/disk-space.js';
import { uuidInKey } from '../blobs/sweep.js';
import { checksumMatches, tusErrors, type ExpectedChecksum } from './protocol.js';
import { TusRepo, type TusRow } from './repo.js';
import { TusStaging, type ChunkWriter } from './staging.js';
import { UploadLocks } from './locks.js';
import { commonErrors } from '../core/error-catalogue/common.js';

/** Without a checksum, received bytes become durable (fsync, then the offset) every this many. */
export const CHECKPOINT_BYTES = 8 * 1024 * 1024;
/** How long a request waits for the upload's current writer (usually a PATCH whose client left). */
const LOCK_WAIT_MS = 5_000;
const SWEEP_BATCH = 200;

export interface CreateRequest {
  length: number;
  uploadMetadata: string;
  filename: string | undefined;
  contentType: string;
  store: StoreChoice;
  metadata: Record<string, string>;
  tags: string[];
  /** The client address group it counts against (client.ts). */
  client: string;
}

export interface Chunk {
  offset: number;
  /** The request's Content-Length, when it declared one. */
  declaredLength: number | undefined;
  checksum: ExpectedChecksum | null;
}

/** An upload as the routes report it: its row, and its file once complete. */
export interface UploadState {
  row: TusRow;
  file: FileRecord | null;
}

const outOfSpace = commonErrors.insufficientStorage;

export class TusService {
  private readonly repo: TusRepo;
  private readonly locks = new UploadLocks();
  readonly staging: TusStaging;

  constructor(private readonly ctx: AppContext) {
    this.repo = new TusRepo(ctx.db);
    this.staging = new TusStaging(ctx.config.dataDir);
  }

  /**
   * Checks the client's share of the project's budget, the budget itself and the disk, then
   * records the upload with an empty staging file. The share comes first: one client address
   * cannot reserve the whole project budget and lock its other clients out (docs/tus.md, "Limits").
   */
  async create(project: ProjectRow, r: CreateRequest, requestId: string): Promise<UploadState> {
    const now = nowUs();
    if ((await this.repo.openBytes(project.id, now, r.client)) + r.length > this.ctx.config.tusClientMaxBytes) throw tusErrors.clientLimit();
    if ((await this.repo.openBytes(project.id, now)) + r.length > this.ctx.config.tusProjectMaxBytes) throw tusErrors.projectLimit();
    const id = crypto.randomUUID();
    await this.staging.create(id);
    if ((await freeBytes(this.staging.dir)) < r.length) {
      await this.staging.remove(id);
      throw outOfSpace();
    }
    const row: TusRow = {
      id,
      project_id: project.id,
      file_uuid: crypto.randomUUID(),
      length: r.length,
      received: 0,
      upload_metadata: r.uploadMetadata,
      filename: r.filename ?? null,
      content_type: r.contentType,
      store: r.store === 'auto' ? 'auto' : r.store ? '1' : '0',
      metadata: JSON.stringify(r.metadata),
      tags: JSON.stringify(r.tags),
      state: 'open',
      created_us: now,
      expires_us: now + this.ctx.config.tusTtlMs * 1000,
      client: r.client,
    };
    try {
      await this.repo.insert(row);
    } catch (err) {
      await this.staging.remove(id);
      throw err;
    }
    if (r.length > 0) return { row, file: null };
    // An empty upload is complete as soon as it exists.
    return this.locks.with(id, LOCK_WAIT_MS, tusErrors.locked, async () => this.finish(row, requestId));
  }

  /**
   * PATCH: appends the body at `chunk.offset`. Without a checksum, what arrived stays even when the
   * client goes away (it resumes from there); with one, the chunk counts whole or not at all.
   */
  async write(id: string, body: Readable, chunk: Chunk, requestId: string): Promise<UploadState> {
    await this.live(id);
    return this.locks.with(id, LOCK_WAIT_MS, tusErrors.locked, async () => {
      const row = await this.live(id);
      const length = Number(row.length);
      const received = Number(row.received);
      if (row.state === 'done') {
        if (chunk.offset === length && !chunk.declaredLength) return { row, file: await this.ctx.files.find(Number(row.project_id), row.file_uuid) };
        throw tusErrors.offset(length);
      }
      if (chunk.offset !== received) throw tusErrors.offset(received);
      if (chunk.declaredLength !== undefined && chunk.declaredLength > length - received) throw tusErrors.pastLength();
      const writer = await this.staging.open(id, received);
      if (!writer) throw tusErrors.notFound();
      let durable: number;
      try {
        durable = await this.append(row, writer, body, chunk.checksum);
      } finally {
        await writer.close();
      }
      const now = { ...row, received: durable };
      if (durable < length) return { row: now, file: null };
      return this.finish(now, requestId);
    });
  }

  /** Streams `body` into `writer`; answers the new durable offset, or throws (the client's error, 413, 460). */
  private async append(row: TusRow, writer: ChunkWriter, body: Readable, checksum: ExpectedChecksum | null): Promise<number> {
    const start = Number(row.received);
    const room = Number(row.length) - start;
    const hash = checksum ? crypto.createHash(checksum.algorithm) : null;
    let durable = start;
    const checkpoint = async (): Promise<void> => {
      const to = start + writer.written;
      if (to === durable) return;
      await writer.sync();
      // The row is gone (terminated, expired and swept) or moved by another node: stop.
      if (!(await this.repo.advance(row.id, durable, to, nowUs() + this.ctx.config.tusTtlMs * 1000))) throw tusErrors.notFound();
      durable = to;
    };
    try {
      for await (const data of body) {
        const buf = data as Buffer;
        if (writer.written + buf.length > room) throw tusErrors.pastLength();
        await writer.write(buf);
        hash?.update(buf);
        if (!hash && start + writer.written - durable >= CHECKPOINT_BYTES) await checkpoint();
      }
    } catch (err) {
      // A checksummed chunk is all or nothing; otherwise what arrived is kept for the resume.
      if (hash) await writer.discard();
      else if (!isAppError(err) || err.status !== 404) await checkpoint().catch(() => undefined);
      throw err;
    }
    if (hash && checksum && !checksumMatches(checksum, hash)) {
      await writer.discard();
      throw tusErrors.checksumMismatch();
    }
    await checkpoint();
    return durable;
  }

  /** HEAD: the durable offset (after any write in flight settles); finishes a completion a crash interrupted. */
  async status(id: string, requestId: string): Promise<UploadState> {
    await this.live(id);
    return this.locks.with(id, LOCK_WAIT_MS, tusErrors.locked, async () => {
      const row = await this.live(id);
      if (row.state === 'done') return { row, file: await this.ctx.files.find(Number(row.project_id), row.file_uuid) };
      if (Number(row.received) === Number(row.length)) return this.finish(row, requestId);
      return { row, file: null };
    });
  }

  /** DELETE: forgets the upload and its staged bytes. A finished upload's file stays (it is an ordinary file). */
  async terminate(id: string): Promise<void> {
    if (!(await this.repo.get(id))) throw tusErrors.notFound();
    await this.locks.with(id, LOCK_WAIT_MS, tusErrors.locked, async () => {
      await this.repo.delete(id);
      await this.staging.remove(id);
    });
  }

  /** The file a finished upload made. */
  async info(id: string): Promise<FileRecord> {
    const row = await this.repo.get(id);
    if (!row) throw tusErrors.notFound();
    if (row.state !== 'done') throw tusErrors.incomplete();
    const file = await this.ctx.files.find(Number(row.project_id), row.file_uuid);
    if (!file) throw tusErrors.fileNotFound();
    return file;
  }

  /** The upload, or 404 (unknown) / 410 (unfinished and past its expiry). */
  private async live(id: string): Promise<TusRow> {
    const row = await this.repo.get(id);
    if (!row) throw tusErrors.notFound();
    if (row.state === 'open' && Number(row.expires_us) < nowUs()) throw tusErrors.expired();
    return row;
  }

  /**
   * Moves the complete staged bytes into the blob store under the file's uuid and commits the
   * file. Idempotent: a file already committed (a completion that died before marking the row
   * done) is reused, and the put overwrites a blob such a completion left.
   */
  private async finish(row: TusRow, requestId: string): Promise<UploadState> {
    const project = await this.ctx.projects.byId(Number(row.project_id));
    if (!project) throw tusErrors.notFound();
    const file = (await this.ctx.files.find(project.id, row.file_uuid)) ?? (await this.commit(project, row, requestId));
    const expires = nowUs() + this.ctx.config.tusTtlMs * 1000;
    await this.repo.markDone(row.id, expires);
    await this.staging.remove(row.id);
    this.ctx.worker.poke();
    return { row: { ...row, state: 'done', expires_us: expires }, file };
  }

  private async commit(project: ProjectRow, row: TusRow, requestId: string): Promise<FileRecord> {
    const length = Number(row.length);
    const blobKey = fileBlobKey(row.file_uuid);
    // A large upload's digests come from a job after the answer (files/digest-later.ts).
    const skipDigests = digestsLaterFor(this.ctx.config.digestLaterBytes, length);
    const put = await this.ctx.blobs.put(blobKey, this.staging.read(row.id), { maxBytes: length, onTooLarge: tusErrors.pastLength, skipDigests });
    if (put.size !== length) {
      await this.ctx.blobs.delete(blobKey);
      throw new Error(`tus upload ${row.id}: staged ${put.size} bytes, expected ${length}`);
    }
    return this.ctx.files.commit(project, { uuid: row.file_uuid, blobKey, size: put.size, md5: put.md5, sha256: put.sha256 }, {
      originalFilename: row.filename ?? undefined,
      declaredType: row.content_type,
      store: row.store === 'auto' ? 'auto' : row.store === '1',
      metadata: JSON.parse(row.metadata) as Record<string, string>,
      tags: JSON.parse(row.tags) as string[],
      initiator: apiInitiator(requestId),
    });
  }

  /**
   * Job body: drops expired uploads (their rows and staged bytes) and staging files no row names.
   * An upload being written right now is left for the next sweep.
   */
  async sweep(): Promise<number> {
    let removed = 0;
    for (;;) {
      const rows = await this.repo.expired(nowUs(), SWEEP_BATCH);
      for (const r of rows) {
        const gone = await this.locks
          .with(r.id, 0, tusErrors.locked, async () => {
            await this.repo.delete(r.id);
            await this.staging.remove(r.id);
            return true;
          })
          .catch(() => false);
        if (gone) removed++;
      }
      if (rows.length < SWEEP_BATCH) break;
    }
    const stale = await this.staging.staleIds(this.ctx.config.tusTtlMs);
    const known = await this.repo.existingIds(stale);
    for (const id of stale.filter((s) => !known.has(s))) await this.staging.remove(id);
    return removed;
  }

  /** Of `keys` under files/, those of an upload still open (a completion may be writing them). */
  async referencedFileKeys(keys: string[]): Promise<Set<string>> {
    const byUuid = new Map<string, string>();
    for (const k of keys) {
      const uuid = uuidInKey(k, 'files/');
      if (uuid) byUuid.set(uuid, k);
    }
    const open = await this.repo.openFileUuids([...byUuid.keys()]);
    return new Set([...open].map((u) => byUuid.get(u) as string));
  }
}
