/**
 * The file lifecycle: uploaded -> stored -> removed, expiry of unstored files, metadata. Every
 * state change and the events it causes commit in one transaction; bytes are reclaimed by a job.
 */
import type { Readable } from 'node:stream';
import { withLocalFile } from '../blobs/local-file.js';
import type { BlobStore } from '../blobs/store.js';
import type { Db, DbOrTrx } from '../db/connect.js';
import { isUniqueViolation } from '../db/errors.js';
import { GroupCommit } from '../db/group-commit.js';
import type { ReadBatchStats } from '../db/read-batcher.js';
import { addDeltas, adjustCounters, fileMove, fileState, type CounterDelta } from '../db/project-counters.js';
import { FileRepo, type ListQuery, type SizeListQuery } from './repo.js';
import { ContentRepo } from './contents/repo.js';
import { FileRecordCache } from './record-cache.js';
import { uuidInKey } from '../blobs/sweep.js';
import type { SearchCursor, SearchQuery } from './search-query.js';
import { enqueue } from '../jobs/queue.js';
import { INSPECT_HEAD_BYTES, inspectFile, inspectHead, type Inspection } from '../media/pipeline/inspect.js';
import { AppError } from '../core/errors.js';
import { FileEventOutbox } from '../jobs/event-outbox.js';
import { systemInitiator, type FileEvent, type Initiator } from '../jobs/file-events.js';
import { cleanOriginalFilename, fileBlobKey, sanitizeFilename, type AppdataEntry, type FileRecord, type StoreChoice } from '../core/file-record.js';
import { declaredMimeType } from '../core/declared-type.js';
import { newUuid, parseUuid } from '../core/ids.js';
import { validateKeyCount, validateMetadataKey, validateMetadataValue } from '../core/metadata.js';
import type { ProjectRow } from '../projects/service.js';
import { formatUs, nowUs } from '../core/time.js';
import { checkTagCount, diffTags, type TagChange } from '../core/tags.js';

export const BLOB_DELETE_JOB = 'blob.delete';
export const EXPIRY_SWEEP_JOB = 'files.expire';

export interface IngestOptions {
  originalFilename: string | undefined;
  /** The Content-Type the client gave the file (part header, multipart `content_type`, remote response); null when none. */
  declaredType: string | null;
  store: StoreChoice;
  metadata: Record<string, string>;
  maxBytes: number;
  onTooLarge: () => Error;
  initiator: Initiator;
  sourceUrl?: string | null;
  /** The new file's uuid when the caller chose it in advance (a conversion answers it at once). */
  uuid?: string;
  /** Normalized tags (core/tags.ts); none when absent. */
  tags?: string[];
}

export interface StagedBlob {
  uuid: string;
  blobKey: string;
  size: number;
  md5: string;
  /** Content address: a committed row shares the project's blob with the same SHA-256, if any. */
  sha256: string;
  /** The first bytes (inspect.ts's INSPECT_HEAD_BYTES), kept as they streamed in, when the store returned them. */
  head?: Buffer;
}

/** Work that must commit with a new file's row (add-ons run on upload enqueue theirs here). */
export type UploadHook = (trx: DbOrTrx, file: FileRecord, initiator: Initiator) => Promise<void>;

/** An add-on's result for `appdata.<name>` and what else it asks for (see writeAddonResult). */
export interface AddonResultWrite {
  name: string;
  version: string;
  data: unknown;
  initiator: Initiator;
  /** Also record `file.infected`. */
  infected: boolean;
  /** Remove the file in the same transaction (its `file.deleted` follows the appdata events). */
  remove: boolean;
}

export const fileNotFound = (): AppError => new AppError(404, 'FileNotFoundError', 'Not found.');

export class FileService {
  private readonly repo: FileRepo;
  private readonly contents: ContentRepo;
  private readonly removedListeners = new Set<(uuid: string) => void>();
  private readonly uploadHooks: UploadHook[] = [];
  /**
   * New files' rows commit in groups: uploads whose bytes are durable while another upload's row is
   * committing share the next transaction, so concurrent uploads share one durable commit (one
   * WAL fsync on SQLite) instead of queueing for one each. Each still answers only after its row
   * committed; a failing row fails alone (group-commit.ts runs the rest again).
   */
  private readonly rowCommits: GroupCommit;
  /** Records of the REST reads of one file, valid while the store's change stamp holds. */
  private readonly readCache: FileRecordCache;
  /** Where this service's changes write their file events (app.ts tells it who listens). */
  readonly events = new FileEventOutbox();

  constructor(private readonly db: Db, readonly blobs: BlobStore) {
    this.readCache = new FileRecordCache(() => db.changeStamp());
    this.repo = new FileRepo(db);
    this.contents = new ContentRepo(db);
    this.rowCommits = new GroupCommit(db);
  }

  /**
   * Calls `listener` with each file's uuid after its removal commits (the CDN drops its cached
   * row). Returns the unsubscribe function.
   */
  onRemoved(listener: (uuid: string) => void): () => void {
    this.removedListeners.add(listener);
    return () => void this.removedListeners.delete(listener);
  }

  /** Adds work to the transaction of every new file's row (it fails the upload if it throws). */
  onUpload(hook: UploadHook): void {
    this.uploadHooks.push(hook);
  }

  private removed(uuid: string): void {
    for (const listener of this.removedListeners) listener(uuid);
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
  async stage(source: Readable, maxBytes: number, onTooLarge: () => Error, uuid = newUuid()): Promise<StagedBlob> {
    const blobKey = fileBlobKey(uuid);
    // fresh: no row names this key until commit() (a crash in between leaves bytes the sweep reclaims).
    const { size, md5, sha256, head } = await this.blobs.put(blobKey, source, { maxBytes, onTooLarge, keepHead: INSPECT_HEAD_BYTES, fresh: true });
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
  private async insertWithUniqueTime(record: FileRecord, sha256: string, stored: boolean, initiator: Initiator): Promise<FileRecord> {
    for (let attempt = 0; ; attempt++) {
      const t = nowUs();
      let row = { ...record, uploadedUs: t, storedUs: stored ? t : null };
      try {
        await this.rowCommits.run(async (trx) => {
          const stagedKey = record.blobKey as string;
          const blobKey = await this.contents.claim(trx, { projectId: record.projectId, sha256, size: record.size, stagedKey, nowUs: t });
          row = { ...row, blobKey };
          await this.repo.insert(trx, row);
          // Both events in one call: their audience is one read, their jobs one insert.
          const uploaded: FileEvent = { projectId: row.projectId, event: 'file.uploaded', uuid: row.uuid, initiator };
          await this.events.recordMany(trx, stored ? [uploaded, { ...uploaded, event: 'file.stored' }] : [uploaded]);
          for (const hook of this.uploadHooks) await hook(trx, row, initiator);
          await adjustCounters(trx, row.projectId, fileMove(null, fileState(row)));
        });
        // Its text joins the search index with the next batch (a search indexes it first anyway).
        this.repo.textIndex.soon();
        return row;
      } catch (err) {
        if (attempt < 5 && isUniqueViolation(err)) continue;
        throw err;
      }
    }
  }

  /** For the REST reads of one file: the record may come from this node's cache (record-cache.ts) and is frozen. */
  async get(projectId: number, uuid: string): Promise<Readonly<FileRecord>> {
    const id = parseUuid(uuid);
    const found = id ? await this.readCache.get(projectId, id, () => this.repo.get(projectId, id)) : null;
    if (!found) throw fileNotFound();
    return found;
  }

  /**
   * What `get` would answer from this node's cache alone, without a promise (`uuid` canonical);
   * undefined when `get` would read the store (or throw its 404).
   */
  cached(projectId: number, uuid: string): Readonly<FileRecord> | undefined {
    return this.readCache.peek(projectId, uuid);
  }

  /** Counts of the batched lookups by uuid (PostgreSQL; null on SQLite): the node's metrics. */
  readBatchStats(): Readonly<ReadBatchStats> | null {
    return this.repo.readBatchStats();
  }

  /** The file as stored (removed ones included), or null; `uuid` must already be canonical. */
  find(projectId: number, uuid: string): Promise<FileRecord | null> {
    return this.repo.get(projectId, uuid);
  }

  /** Files of the project among `uuids` (removed ones included), in no particular order. */
  findMany(projectId: number, uuids: string[]): Promise<FileRecord[]> {
    return this.repo.getMany(projectId, uuids);
  }

  /** Any project's file: for the CDN, whose URLs carry only the uuid. */
  byUuid(uuid: string): Promise<FileRecord | null> {
    return this.repo.byUuid(uuid);
  }

  /** The newest live file of the project fetched from this URL (from_url duplicate check). */
  latestFromUrl(projectId: number, sourceUrl: string): Promise<FileRecord | null> {
    return this.repo.latestFromUrl(projectId, sourceUrl);
  }

  /** A page of `POST /files/search/` (search-query.ts) and the count of all matches. */
  search(projectId: number, q: SearchQuery, page: { limit: number; offset: number; cursor: SearchCursor | null }): Promise<FileRecord[]> {
    return this.repo.search(projectId, q, page);
  }

  searchCount(projectId: number, q: SearchQuery): Promise<number> {
    return this.repo.searchCount(projectId, q);
  }

  list(q: ListQuery): Promise<FileRecord[]> {
    return this.repo.list(q);
  }

  /** REST v0.6 `ordering=size|-size`. */
  listBySize(q: SizeListQuery): Promise<FileRecord[]> {
    return this.repo.listBySize(q);
  }

  /**
   * Of `keys` under files/, those a file row or a content row names, plus those this feature cannot
   * judge (not `files/<xx>/<uuid>`): the leftovers sweep keeps them. By key, not by uuid: a blob
   * staged by one upload may hold the bytes of many files, including after that upload's file went.
   */
  async referencedBlobKeys(keys: string[]): Promise<Set<string>> {
    const kept = new Set(keys.filter((k) => uuidInKey(k, 'files/') === null));
    const judged = keys.filter((k) => !kept.has(k));
    if (judged.length > 0) for (const k of await this.contents.inUse(judged)) kept.add(k);
    return kept;
  }

  count(q: Pick<ListQuery, 'projectId' | 'removed' | 'stored' | 'tags'>): Promise<number> {
    return this.repo.count(q);
  }

  /** The REST list's `total` (as `count`) and `totals` (as `totals`), the project's counters read once. */
  countAndTotals(q: Pick<ListQuery, 'projectId' | 'removed' | 'stored' | 'tags'>): Promise<{ total: number; totals: { removed: number; stored: number; unstored: number } }> {
    return this.repo.countAndTotals(q);
  }

  /** Counts of the project's removed, stored and unstored files (REST list `totals`). */
  totals(projectId: number): Promise<{ removed: number; stored: number; unstored: number }> {
    return this.repo.totals(projectId);
  }

  async store(projectId: number, uuid: string, initiator: Initiator): Promise<FileRecord> {
    return this.db.transaction(async (trx) => {
      const file = await this.lockOrThrow(trx, projectId, uuid);
      const stored = await this.storeLocked(trx, file, initiator);
      await adjustCounters(trx, projectId, moveOf(file, stored));
      return stored;
    });
  }

  private async storeLocked(trx: DbOrTrx, file: FileRecord, initiator: Initiator): Promise<FileRecord> {
    if (file.removedUs !== null) throw new AppError(400, 'FileRemoved', 'File is removed and can not be stored.');
    if (file.storedUs !== null) return file;
    const t = nowUs();
    await this.repo.update(trx, file.projectId, file.uuid, { stored_us: t });
    await this.events.record(trx, { projectId: file.projectId, event: 'file.stored', uuid: file.uuid, initiator });
    return { ...file, storedUs: t };
  }

  /** Marks the file removed at once; its bytes are reclaimed by a job in the same transaction. */
  async remove(projectId: number, uuid: string, initiator: Initiator): Promise<FileRecord> {
    const removed = await this.db.transaction(async (trx) => {
      const file = await this.lockOrThrow(trx, projectId, uuid);
      const removed = await this.removeLocked(trx, file, initiator, 'file.deleted');
      await adjustCounters(trx, projectId, moveOf(file, removed));
      return removed;
    });
    this.removed(removed.uuid);
    return removed;
  }

  private async removeLocked(trx: DbOrTrx, file: FileRecord, initiator: Initiator, event: 'file.deleted' | null): Promise<FileRecord> {
    if (file.removedUs !== null) return file;
    const t = nowUs();
    await this.repo.update(trx, file.projectId, file.uuid, { removed_us: t, stored_us: null });
    if (file.blobKey) await enqueue(trx, { kind: BLOB_DELETE_JOB, payload: { projectId: file.projectId, uuid: file.uuid, blobKey: file.blobKey } });
    if (event) await this.events.record(trx, { projectId: file.projectId, event, uuid: file.uuid, initiator });
    return { ...file, removedUs: t, storedUs: null };
  }

  /**
   * Batch store / delete: per-id problems instead of failing the whole request. The files are
   * locked in one query, and a store writes all its rows and events in one statement each: on
   * PostgreSQL every statement is a round trip, and a store of 100 files made about 400 of them
   * one after the other (the webhook burst's first 2 s, docs/performance.md).
   */
  async batch(projectId: number, ids: string[], action: 'store' | 'remove', initiator: Initiator): Promise<{ problems: Record<string, string>; result: FileRecord[] }> {
    const problems: Record<string, string> = {};
    const wanted = new Map<string, string>();
    for (const raw of ids) {
      const id = parseUuid(raw);
      if (!id) problems[raw] = 'Invalid';
      else wanted.set(id, raw);
    }
    const result: FileRecord[] = [];
    await this.db.transaction(async (trx) => {
      const locked = await this.repo.getManyForUpdate(trx, projectId, [...wanted.keys()]);
      const moves: CounterDelta[] = [];
      const toStore: FileRecord[] = [];
      const t = nowUs();
      for (const [id, raw] of wanted) {
        const file = locked.get(id);
        if (!file) {
          problems[raw] = 'Missing in the project';
          continue;
        }
        if (action === 'store' && file.removedUs !== null) {
          problems[raw] = 'File is removed';
          continue;
        }
        let changed = file;
        if (action === 'remove') changed = await this.removeLocked(trx, file, initiator, 'file.deleted');
        else if (file.storedUs === null) toStore.push((changed = { ...file, storedUs: t }));
        moves.push(moveOf(file, changed));
        result.push(changed);
      }
      await this.storeMany(trx, projectId, toStore, t, initiator);
      await adjustCounters(trx, projectId, addDeltas(...moves));
    });
    if (action === 'remove') for (const f of result) this.removed(f.uuid);
    return { problems, result };
  }

  /** storeLocked for several locked, unstored files of one project: one UPDATE, one INSERT of events. */
  private async storeMany(trx: DbOrTrx, projectId: number, files: FileRecord[], t: number, initiator: Initiator): Promise<void> {
    if (files.length === 0) return;
    await this.repo.markStored(trx, projectId, files.map((f) => f.uuid), t);
    await this.events.recordMany(trx, files.map((f) => ({ projectId, event: 'file.stored' as const, uuid: f.uuid, initiator })));
  }

  async setMetadataKey(projectId: number, uuid: string, key: string, value: unknown, initiator: Initiator): Promise<{ value: string; created: boolean }> {
    validateMetadataKey(key);
    const clean = validateMetadataValue(key, value);
    return this.db.transaction(async (trx) => {
      const file = await this.lockOrThrow(trx, projectId, uuid);
      if (file.removedUs !== null) throw new AppError(400, 'FileRemoved', 'File is removed; its metadata can not be changed.');
      const previous = file.metadata[key];
      const created = previous === undefined;
      if (created) validateKeyCount(Object.keys(file.metadata).length + 1);
      if (previous === clean) return { value: clean, created };
      const metadata = { ...file.metadata, [key]: clean };
      await this.repo.update(trx, projectId, file.uuid, { metadata: JSON.stringify(metadata) });
      await this.events.record(trx, { projectId, event: 'file.info_updated', uuid: file.uuid, initiator, previousValues: { metadata: { [key]: previous ?? null } } });
      return { value: clean, created };
    });
  }

  async deleteMetadataKey(projectId: number, uuid: string, key: string, initiator: Initiator): Promise<void> {
    validateMetadataKey(key);
    await this.db.transaction(async (trx) => {
      const file = await this.lockOrThrow(trx, projectId, uuid);
      if (file.removedUs !== null) throw new AppError(400, 'FileRemoved', 'File is removed; its metadata can not be changed.');
      const previous = file.metadata[key];
      if (previous === undefined) throw fileNotFound();
      const { [key]: _dropped, ...metadata } = file.metadata;
      await this.repo.update(trx, projectId, file.uuid, { metadata: JSON.stringify(metadata) });
      await this.events.record(trx, { projectId, event: 'file.info_updated', uuid: file.uuid, initiator, previousValues: { metadata: { [key]: previous } } });
    });
  }

  /**
   * Writes `appdata.<name>` with its `file.info_updated` event (previous value: the old entry or
   * null), `file.infected` and the removal when asked, and `alongside` (the add-on execution's
   * final state), all in one transaction. A missing or removed file gets no write: `alongside`
   * runs with `written` false.
   */
  async writeAddonResult(projectId: number, uuid: string, w: AddonResultWrite, alongside: (trx: DbOrTrx, written: boolean) => Promise<void>): Promise<boolean> {
    let removedUuid: string | null = null;
    const written = await this.db.transaction(async (trx) => {
      const file = await this.repo.getForUpdate(trx, projectId, uuid);
      if (!file || file.removedUs !== null) {
        await alongside(trx, false);
        return false;
      }
      const previous = file.appdata[w.name] ?? null;
      const now = formatUs(nowUs());
      const entry: AppdataEntry = { data: w.data, version: w.version, datetime_created: previous?.datetime_created ?? now, datetime_updated: now };
      const appdata = { ...file.appdata, [w.name]: entry };
      await this.repo.setAppdata(trx, projectId, file.uuid, appdata);
      await this.events.record(trx, { projectId, event: 'file.info_updated', uuid: file.uuid, initiator: w.initiator, previousValues: { appdata: { [w.name]: previous } } });
      if (w.infected) await this.events.record(trx, { projectId, event: 'file.infected', uuid: file.uuid, initiator: w.initiator });
      if (w.remove) {
        const removed = await this.removeLocked(trx, { ...file, appdata }, w.initiator, 'file.deleted');
        removedUuid = file.uuid;
        await adjustCounters(trx, projectId, moveOf(file, removed));
      }
      await alongside(trx, true);
      return true;
    });
    if (removedUuid) this.removed(removedUuid);
    return written;
  }

  /**
   * Tags: `replace` sets the whole list, `update` deletes then adds (wire-reference §2.13). A
   * change commits with its file.info_updated event (previous_values.tags = the list before).
   */
  async changeTags(projectId: number, uuid: string, change: { replace: string[] } | { add: string[]; delete: string[] }, initiator: Initiator): Promise<TagChange> {
    return this.db.transaction(async (trx) => {
      const file = await this.lockOrThrow(trx, projectId, uuid);
      if (file.removedUs !== null) throw new AppError(400, 'FileRemoved', 'File is removed; its tags can not be changed.');
      const before = file.tags;
      let after: string[];
      if ('replace' in change) after = change.replace;
      else {
        const kept = before.filter((t) => !change.delete.includes(t));
        after = [...kept, ...change.add.filter((t) => !kept.includes(t))];
      }
      const result = diffTags(before, checkTagCount([...new Set(after)]));
      if (result.added.length === 0 && result.deleted.length === 0) return { ...result, tags: before };
      await this.repo.setTags(trx, projectId, file.uuid, result);
      await this.events.record(trx, { projectId, event: 'file.info_updated', uuid: file.uuid, initiator, previousValues: { tags: before } });
      return result;
    });
  }

  /** Expiry sweep: unstored files older than the TTL become removed; their bytes go by job. */
  async expireUnstored(ttlMs: number, batchSize = 500): Promise<number> {
    const cutoff = nowUs() - ttlMs * 1000;
    let total = 0;
    for (;;) {
      const due = await this.repo.expired(cutoff, batchSize);
      if (due.length === 0) return total;
      const expired: string[] = [];
      await this.db.transaction(async (trx) => {
        expired.length = 0;
        const moves = new Map<number, CounterDelta[]>();
        for (const { uuid, projectId } of due) {
          const file = await this.repo.getForUpdate(trx, projectId, uuid);
          // Re-check under the lock: it may have been stored or removed since the scan.
          if (file && file.storedUs === null && file.removedUs === null) {
            const removed = await this.removeLocked(trx, file, systemInitiator(), null);
            moves.set(projectId, [...(moves.get(projectId) ?? []), moveOf(file, removed)]);
            expired.push(uuid);
          }
        }
        // In project order: two sweeps (on two nodes) never wait on each other's counter rows in a cycle.
        for (const projectId of [...moves.keys()].sort((a, b) => a - b)) await adjustCounters(trx, projectId, addDeltas(...moves.get(projectId)!));
      });
      for (const uuid of expired) this.removed(uuid);
      total += expired.length;
      if (due.length < batchSize) return total;
    }
  }

  /**
   * Job body: the removed file forgets its key, and the bytes go once no other file uses them. The
   * delete follows the commit, so a crash in between leaves unreferenced bytes (swept), never a row
   * without bytes. Idempotent: a rerun finds the key forgotten and deletes the bytes again.
   */
  async reclaimBytes(projectId: number, uuid: string, blobKey: string): Promise<void> {
    const unused = await this.db.transaction((trx) => this.contents.release(trx, projectId, uuid, blobKey));
    if (unused) await this.blobs.delete(blobKey);
  }

  private async lockOrThrow(trx: DbOrTrx, projectId: number, uuid: string): Promise<FileRecord> {
    const id = parseUuid(uuid);
    const file = id ? await this.repo.getForUpdate(trx, projectId, id) : null;
    if (!file) throw fileNotFound();
    return file;
  }
}

/** The counters' move of a file changed by storeLocked / removeLocked (empty when it was already there). */
function moveOf(before: FileRecord, after: FileRecord): CounterDelta {
  return fileMove(fileState(before), fileState(after));
}
