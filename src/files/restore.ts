/**
 * Restoring files copied from another server (`stowage import`): the file keeps its uuid, names,
 * times, state, metadata, appdata and tags. Bytes go through the same staging as uploads (blob
 * store, size limit) and are inspected here, so content_info is this server's own reading of them.
 */
import type { Readable } from 'node:stream';
import { withLocalFile } from '../blobs/local-file.js';
import type { Db } from '../db/connect.js';
import { isUniqueViolation } from '../db/errors.js';
import { fileBlobKey, type AppdataEntry, type ContentInfo, type FileRecord } from '../core/file-record.js';
import type { Initiator } from '../jobs/file-events.js';
import { inspectFile } from '../media/pipeline/inspect.js';
import type { ProjectRow } from '../projects/service.js';
import { ContentRepo } from './contents/repo.js';
import { adjustCounters, fileMove, fileState } from '../db/project-counters.js';
import { FileRepo } from './repo.js';
import type { FileService } from './service.js';

/** A file as the source server describes it (already validated). */
export interface RestoredFile {
  uuid: string;
  originalFilename: string;
  /** The name in the file's CDN URL (`/<uuid>/<filename>`). */
  filename: string;
  /** The wire's `mime_type` (what the uploader declared). */
  declaredType: string;
  size: number;
  uploadedUs: number;
  storedUs: number | null;
  removedUs: number | null;
  metadata: Record<string, string>;
  appdata: Record<string, AppdataEntry>;
  tags: string[];
  /** The source's reading of the bytes: kept for removed files, whose bytes are not copied. */
  isImage: boolean;
  contentInfo: ContentInfo | null;
}

/** Bytes arrive with the source's size; more or fewer means a broken transfer. */
export class SizeMismatch extends Error {
  constructor(uuid: string, expected: number, got: number | null) {
    super(got === null ? `${uuid}: the source sent more than its size of ${expected} bytes` : `${uuid}: the source sent ${got} bytes, its size is ${expected}`);
    this.name = 'SizeMismatch';
  }
}

/** How often a clashing upload time is moved on by a microsecond before giving up. */
const TIME_CLASH_RETRIES = 50;

export class FileRestorer {
  private readonly repo: FileRepo;
  private readonly contents: ContentRepo;

  constructor(
    private readonly db: Db,
    private readonly files: FileService,
  ) {
    this.repo = new FileRepo(db);
    this.contents = new ContentRepo(db);
  }

  /** What this server already holds under these uuids, in any project. */
  async existing(uuids: string[]): Promise<Map<string, FileRecord>> {
    const rows: FileRecord[] = [];
    // Chunked: SQLite caps bound parameters per statement.
    for (let i = 0; i < uuids.length; i += 200) rows.push(...(await this.repo.byUuids(uuids.slice(i, i + 200))));
    return new Map(rows.map((f) => [f.uuid, f]));
  }

  /**
   * Stages the bytes under the file's own uuid, inspects them and commits the row with its
   * file.uploaded (and file.stored) events. The caller has checked the uuid is free: the blob key
   * follows from the uuid, so staging over a live file would replace its bytes.
   */
  async restoreLive(project: ProjectRow, f: RestoredFile, source: Readable, maxBytes: number, initiator: Initiator): Promise<FileRecord> {
    if (f.size > maxBytes) throw new Error(`${f.uuid}: ${f.size} bytes is over this server's upload limit of ${maxBytes}`);
    // Blobs are shared by content (docs/storage.md): another file may use the key this uuid stages to.
    if ((await this.contents.inUse([fileBlobKey(f.uuid)])).size > 0) throw new Error(`${f.uuid}: its blob key holds another file's bytes here`);
    const staged = await this.files.stage(source, f.size, () => new SizeMismatch(f.uuid, f.size, null), f.uuid);
    try {
      if (staged.size !== f.size) throw new SizeMismatch(f.uuid, f.size, staged.size);
      const inspection = await withLocalFile(this.files.blobs, staged.blobKey, inspectFile);
      const record = this.record(project, f, { blobKey: staged.blobKey, md5: staged.md5, mimeType: inspection.mimeType, isImage: inspection.isImage, contentInfo: inspection.contentInfo });
      const file = await this.insert(record, initiator, staged.sha256);
      // The project had these bytes already: the row shares that blob, the staged copy goes.
      if (file.blobKey !== staged.blobKey) await this.files.discard([staged]);
      return file;
    } catch (err) {
      // No row points at these bytes (a uuid clash is caught before staging).
      await this.files.discard([staged]);
      throw err;
    }
  }

  /**
   * A removed file comes over as its row only, like a removed file whose bytes were reclaimed
   * here: nothing would ever serve them. No events: it was never live on this server.
   */
  async restoreRemoved(project: ProjectRow, f: RestoredFile, initiator: Initiator): Promise<FileRecord> {
    const mimeType = f.contentInfo?.mime.mime ?? f.declaredType;
    return this.insert(this.record(project, f, { blobKey: null, md5: '', mimeType, isImage: f.isImage, contentInfo: f.contentInfo }), initiator, null);
  }

  private record(project: ProjectRow, f: RestoredFile, bytes: Pick<FileRecord, 'blobKey' | 'md5' | 'mimeType' | 'isImage' | 'contentInfo'>): FileRecord {
    return {
      uuid: f.uuid,
      projectId: project.id,
      uploadedUs: f.uploadedUs,
      storedUs: f.storedUs,
      removedUs: f.removedUs,
      size: f.size,
      declaredType: f.declaredType,
      originalFilename: f.originalFilename,
      filename: f.filename,
      isReady: true,
      metadata: f.metadata,
      appdata: f.appdata,
      sourceUrl: null,
      tags: f.tags,
      ...bytes,
    };
  }

  /**
   * Upload times are unique per project (the list cursor is exact). A time another file already
   * has here moves on by a microsecond; the stored time keeps its distance to it.
   */
  private async insert(record: FileRecord, initiator: Initiator, sha256: string | null): Promise<FileRecord> {
    for (let shift = 0; ; shift++) {
      let row = { ...record, uploadedUs: record.uploadedUs + shift, storedUs: record.storedUs === null ? null : record.storedUs + shift };
      try {
        await this.db.transaction(async (trx) => {
          // sha256 null: a removed file without bytes.
          if (sha256 === null || row.blobKey === null) await this.repo.insert(trx, row);
          else {
            const blobKey = await this.contents.claim(trx, { projectId: row.projectId, sha256, size: row.size, stagedKey: row.blobKey, nowUs: row.uploadedUs });
            row = { ...row, blobKey };
            await this.repo.insert(trx, row);
            await this.files.events.record(trx, { projectId: row.projectId, event: 'file.uploaded', uuid: row.uuid, initiator });
            if (row.storedUs !== null) await this.files.events.record(trx, { projectId: row.projectId, event: 'file.stored', uuid: row.uuid, initiator });
          }
          await adjustCounters(trx, row.projectId, fileMove(null, fileState(row)));
        });
        return row;
      } catch (err) {
        if (!isUniqueViolation(err) || shift >= TIME_CLASH_RETRIES) throw err;
        // The uuid itself taken meanwhile: not a time clash, report it.
        if ((await this.repo.byUuid(record.uuid)) !== null) throw err;
      }
    }
  }
}
