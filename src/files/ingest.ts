/**
 * New files: the bytes become durable first (stage), then are inspected and committed as a row
 * with its events (commit). A crash in between leaves only bytes, which are swept.
 */
import type { Readable } from 'node:stream';
import { withLocalFile } from '../blobs/local-file.js';
import type { BlobStore } from '../blobs/store.js';
import type { Db } from '../db/connect.js';
import { isUniqueViolation } from '../db/errors.js';
import { GroupCommit } from '../db/group-commit.js';
import { adjustCounters, fileMove, fileState } from '../db/project-counters.js';
import type { FileRepo } from './repo.js';
import type { ContentRepo } from './contents/repo.js';
import { INSPECT_HEAD_BYTES, inspectFile, inspectHead, type Inspection } from '../media/pipeline/inspect.js';
import type { FileEventOutbox } from '../jobs/event-outbox.js';
import type { FileEvent, Initiator } from '../jobs/file-events.js';
import { cleanOriginalFilename, fileBlobKey, sanitizeFilename, type FileRecord } from '../core/file-record.js';
import { declaredMimeType } from '../core/declared-type.js';
import { newUuid } from '../core/ids.js';
import type { ProjectRow } from '../projects/service.js';
import { nowUs } from '../core/time.js';
import { enqueueLaterDigest } from './digest-later.js';
import type { FileLifecycle } from './lifecycle.js';
import type { IngestOptions, StagedBlob, UploadHook } from '../file-contract.js';

export class FileIngest {
  private readonly uploadHooks: UploadHook[] = [];
  /**
   * New files' rows commit in groups: uploads whose bytes are durable while another upload's row is
   * committing (on SQLite: while the WAL sync before theirs runs) share the next transaction, so
   * concurrent uploads share one durable commit (one WAL fsync on SQLite) instead of queueing for
   * one each. Each still answers only after its row committed and synced; a failing row fails
   * alone (group-commit.ts runs the rest again).
   */
  private readonly rowCommits: GroupCommit;

  constructor(
    db: Db,
    private readonly blobs: BlobStore,
    private readonly repo: FileRepo,
    private readonly contents: ContentRepo,
    private readonly events: FileEventOutbox,
    private readonly lifecycle: FileLifecycle,
  ) {
    this.rowCommits = new GroupCommit(db, { afterSync: true });
  }

  /** Adds work to the transaction of every new file's row (it fails the upload if it throws). */
  onUpload(hook: UploadHook): void {
    this.uploadHooks.push(hook);
  }

  /** Streams bytes in, makes them durable, inspects them, then commits the row (in that order). */
  async ingest(project: ProjectRow, source: Readable, opts: IngestOptions): Promise<FileRecord> {
    const staged = await this.stage(source, opts.maxBytes, opts.onTooLarge, opts.uuid);
    return this.commit(project, staged, opts);
  }

  /**
   * First half of an upload: the bytes become durable under a fresh uuid, with no row yet. A crash
   * after this leaves only unreferenced bytes, never a row without bytes.
   */
  async stage(source: Readable, maxBytes: number, onTooLarge: () => Error, uuid = newUuid(), digestsLater = false): Promise<StagedBlob> {
    const blobKey = fileBlobKey(uuid);
    // fresh: no row names this key until commit() (a crash in between leaves bytes the sweep reclaims).
    const { size, md5, sha256, head } = await this.blobs.put(blobKey, source, { maxBytes, onTooLarge, keepHead: INSPECT_HEAD_BYTES, fresh: true, skipDigests: digestsLater });
    return { uuid, blobKey, size, md5, sha256, ...(head ? { head } : {}) };
  }

  /** Drops staged bytes that will never get a row (the request failed after staging). */
  async discard(staged: StagedBlob[]): Promise<void> {
    await Promise.all(staged.map((s) => this.blobs.delete(s.blobKey).catch(() => undefined)));
  }

  /**
   * Second half: inspect the staged bytes and commit the row with its events. The row points at
   * the project's blob with the same SHA-256 when there is one (the staged copy is then dropped
   * once the row is committed), else at the staged bytes, which become that blob (docs/storage.md).
   */
  async commit(project: ProjectRow, staged: StagedBlob, opts: Omit<IngestOptions, 'maxBytes' | 'onTooLarge'>): Promise<FileRecord> {
    try {
      const inspection = await this.inspect(staged);
      const original = cleanOriginalFilename(opts.originalFilename);
      const stored = opts.store === 'auto' ? project.autostore : opts.store;
      const record: FileRecord = {
        uuid: staged.uuid,
        projectId: project.id,
        uploadedUs: 0,
        storedUs: null,
        removedUs: null,
        size: staged.size,
        mimeType: inspection.mimeType,
        declaredType: declaredMimeType(opts.declaredType, original),
        originalFilename: original,
        filename: sanitizeFilename(original),
        isImage: inspection.isImage,
        isReady: true,
        contentInfo: inspection.contentInfo,
        metadata: opts.metadata,
        appdata: {},
        blobKey: staged.blobKey,
        md5: staged.md5,
        sourceUrl: opts.sourceUrl ?? null,
        tags: opts.tags ?? [],
        ...(opts.objectKey !== undefined ? { objectKey: opts.objectKey } : {}),
        ...(opts.objectEtag !== undefined ? { objectEtag: opts.objectEtag } : {}),
      };
      const file = await this.insertWithUniqueTime(record, staged.sha256, stored, opts.initiator);
      // Another file's blob holds these bytes: the staged copy is a duplicate no row names. A crash
      // before this delete leaves it to the leftovers sweep.
      if (file.blobKey !== staged.blobKey) await this.discard([staged]);
      return file;
    } catch (err) {
      // No row points at these bytes: reclaim them now rather than leave an orphan.
      await this.discard([staged]);
      throw err;
    }
  }

  /** From the head kept during the upload when there is one: most types need no read of the file. */
  private async inspect(staged: StagedBlob): Promise<Inspection> {
    const withPath = (fn: (path: string) => Promise<Inspection>) => withLocalFile(this.blobs, staged.blobKey, fn);
    return staged.head ? inspectHead(staged.head, withPath) : withPath((path) => inspectFile(path));
  }

  /**
   * Upload times are unique per project so the list cursor is exact. Within a process nowUs() is
   * strictly increasing; across processes a collision is retried with a fresh time.
   */
  private async insertWithUniqueTime(record: FileRecord, sha256: string | null, stored: boolean, initiator: Initiator): Promise<FileRecord> {
    for (let attempt = 0; ; attempt++) {
      const t = nowUs();
      let row = { ...record, uploadedUs: t, storedUs: stored ? t : null };
      let replaced: string | null = null;
      try {
        await this.rowCommits.run(async (trx) => {
          const stagedKey = record.blobKey as string;
          // Before the insert: the unique key index holds one live file per key.
          replaced = record.objectKey === undefined ? null : await this.lifecycle.removeObjectHolder(trx, record.projectId, record.objectKey, initiator);
          if (sha256 !== null) {
            const blobKey = await this.contents.claim(trx, { projectId: record.projectId, sha256, size: record.size, stagedKey, nowUs: t });
            row = { ...row, blobKey };
            await this.repo.insert(trx, row);
          } else {
            // Its own blob until the digests are known; the job commits with the row.
            await this.repo.insert(trx, row);
            await enqueueLaterDigest(trx, row);
          }
          // Both events in one call: the webhooks' subscription read is one, their jobs one insert.
          const uploaded: FileEvent = { projectId: row.projectId, event: 'file.uploaded', uuid: row.uuid, initiator };
          await this.events.recordMany(trx, stored ? [uploaded, { ...uploaded, event: 'file.stored' }] : [uploaded]);
          for (const hook of this.uploadHooks) await hook(trx, row, initiator);
          await adjustCounters(trx, row.projectId, fileMove(null, fileState(row)));
        });
        if (replaced !== null) this.lifecycle.removed(replaced);
        // Its text joins the search index with the next batch (a search indexes it first anyway).
        this.repo.textIndex.soon();
        return row;
      } catch (err) {
        if (attempt < 5 && isUniqueViolation(err)) continue;
        throw err;
      }
    }
  }
}
