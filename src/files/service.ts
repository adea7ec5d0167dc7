/**
 * The file lifecycle: uploaded -> stored -> removed, expiry of unstored files, metadata. Every
 * state change and the events it causes commit in one transaction; bytes are reclaimed by a job.
 */
import type { Readable } from 'node:stream';
import type { BlobStore } from '../blobs/store.js';
import type { Db, DbOrTrx } from '../db/connect.js';
import type { ReadBatchStats } from '../db/read-batcher.js';
import { FileRepo, type CountedList, type ListQuery, type SizeListQuery } from './repo.js';
import { ContentRepo } from './contents/repo.js';
import { FileRecordCache } from './record-cache.js';
import { uuidInKey } from '../blobs/sweep.js';
import type { SearchCursor, SearchQuery } from './search-query.js';
import { FileEventOutbox } from '../jobs/event-outbox.js';
import type { Initiator } from '../jobs/file-events.js';
import type { FileRecord } from '../core/file-record.js';
import { parseUuid } from '../core/ids.js';
import type { ProjectRow } from '../projects/service.js';
import type { TagChange } from '../core/tags.js';
import { FileEdits } from './edits.js';
import { FileIngest } from './ingest.js';
import { fileNotFound, FileLifecycle } from './lifecycle.js';
import type { AddonResultWrite, FileContract, IngestOptions, Removal, StagedBlob, UploadHook } from '../file-contract.js';
import { LaterDigests } from './digest-later.js';

// FileService is the feature's one service; its parts: new files (ingest.ts), stored and removed
// files (lifecycle.ts), metadata, appdata and tags (edits.ts). The reads are here.
export { fileNotFound } from './lifecycle.js';
export { BLOB_DELETE_JOB, EXPIRY_SWEEP_JOB } from './job-names.js';
export { DIGEST_LATER_JOB } from './digest-later.js';

export class FileService implements FileContract {
  private readonly repo: FileRepo;
  private readonly contents: ContentRepo;
  /** The node's one cache of file rows (REST reads of one file, the CDN), record-cache.ts. */
  private readonly records: FileRecordCache;
  /** Where this service's changes write their file events (app.ts tells it who listens). */
  readonly events = new FileEventOutbox();
  private readonly ingestion: FileIngest;
  private readonly lifecycle: FileLifecycle;
  private readonly edits: FileEdits;
  private readonly laterDigests: LaterDigests;

  constructor(db: Db, readonly blobs: BlobStore) {
    this.repo = new FileRepo(db);
    this.records = new FileRecordCache(
      () => db.changeStamp(),
      (uuid) => this.repo.byUuid(uuid),
    );
    this.contents = new ContentRepo(db);
    this.lifecycle = new FileLifecycle(db, blobs, this.repo, this.contents, this.events);
    this.ingestion = new FileIngest(db, blobs, this.repo, this.contents, this.events, this.lifecycle);
    this.edits = new FileEdits(db, this.repo, this.events, this.lifecycle);
    this.laterDigests = new LaterDigests(db, blobs, this.repo, this.contents);
    // The changes a `recent` read (the CDN) must not miss: a removal or its restore, and a large
    // file's MD5 (its ETag) and maybe its blob, committed after its upload's answer. The other
    // changes move the store's change stamp, which is all `current` reads go by.
    this.lifecycle.onRemoved((uuid) => this.records.drop(uuid));
    this.laterDigests.onDigested((uuid) => this.records.drop(uuid));
  }

  /** Adds work to the transaction of every new file's row (it fails the upload if it throws). */
  onUpload(hook: UploadHook): void {
    this.ingestion.onUpload(hook);
  }

  /** Streams bytes in, makes them durable, inspects them, then commits the row (ingest.ts). */
  ingest(project: ProjectRow, source: Readable, opts: IngestOptions): Promise<FileRecord> {
    return this.ingestion.ingest(project, source, opts);
  }

  /** First half of an upload: the bytes become durable under a fresh uuid, with no row yet (ingest.ts). */
  stage(source: Readable, maxBytes: number, onTooLarge: () => Error, uuid?: string, digestsLater = false): Promise<StagedBlob> {
    return this.ingestion.stage(source, maxBytes, onTooLarge, uuid, digestsLater);
  }

  /** The `file.digest` job: the digests of a file committed without them, and its shared blob (digest-later.ts). */
  digestLater(projectId: number, uuid: string, blobKey: string): Promise<void> {
    return this.laterDigests.run({ projectId, uuid, blobKey });
  }

  /** Drops staged bytes that will never get a row (the request failed after staging). */
  discard(staged: StagedBlob[]): Promise<void> {
    return this.ingestion.discard(staged);
  }

  /** Second half: inspect the staged bytes and commit the row with its events (ingest.ts). */
  commit(project: ProjectRow, staged: StagedBlob, opts: Omit<IngestOptions, 'maxBytes' | 'onTooLarge'>): Promise<FileRecord> {
    return this.ingestion.commit(project, staged, opts);
  }

  /** For the REST reads of one file: as stored now, maybe from this node's cache (record-cache.ts), frozen. */
  async get(projectId: number, uuid: string): Promise<Readonly<FileRecord>> {
    const id = parseUuid(uuid);
    const found = id ? await this.records.current(id) : null;
    if (found?.projectId !== projectId) throw fileNotFound();
    return found;
  }

  /**
   * What `get` would answer from this node's cache alone, without a promise (`uuid` canonical);
   * undefined when `get` would read the store or throw its 404.
   */
  cached(projectId: number, uuid: string): Readonly<FileRecord> | undefined {
    const found = this.records.peek(uuid);
    return found?.projectId === projectId ? found : undefined;
  }

  /** Any project's file (removed ones included) exactly as stored now (record-cache.ts `current`), frozen; null when unknown. */
  current(uuid: string): Promise<Readonly<FileRecord> | null> {
    return this.records.current(uuid);
  }

  currentAt(uuid: string, stamp: string): Readonly<FileRecord> | null | undefined {
    return this.records.peek(uuid, stamp);
  }

  /**
   * For the CDN, whose URLs carry only the uuid: any project's file (removed ones included) as
   * stored now or as this node read it moments ago (record-cache.ts `recent`), frozen; null when unknown.
   */
  recent(uuid: string): Promise<Readonly<FileRecord> | null> {
    return this.records.recent(uuid);
  }

  /** Counts of the batched lookups by uuid (PostgreSQL; null on SQLite): the node's metrics. */
  readBatchStats(): Readonly<ReadBatchStats> | null {
    return this.repo.readBatchStats();
  }

  /** Counts of the batched list pages (PostgreSQL; null on SQLite): the node's metrics. */
  listBatchStats(): Readonly<ReadBatchStats> | null {
    return this.repo.listBatchStats();
  }

  /** The file as stored (removed ones included), or null; `uuid` must already be canonical. */
  find(projectId: number, uuid: string): Promise<FileRecord | null> {
    return this.repo.get(projectId, uuid);
  }

  /** Files of the project among `uuids` (removed ones included), in no particular order; `db`: read in that transaction. */
  findMany(projectId: number, uuids: string[], db?: DbOrTrx): Promise<FileRecord[]> {
    return this.repo.getMany(projectId, uuids, db);
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

  /** A page of the upload-time list with its `total` and `totals`: one round trip on PostgreSQL without tags (list/repo.ts). */
  listWithTotals(q: ListQuery): Promise<CountedList> {
    return this.repo.listWithTotals(q);
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

  /** The REST list's `total` and `totals`, the project's counters read once (list/repo.ts). */
  countAndTotals(q: Pick<ListQuery, 'projectId' | 'removed' | 'stored' | 'tags'>): Promise<{ total: number; totals: { removed: number; stored: number; unstored: number } }> {
    return this.repo.countAndTotals(q);
  }

  /** Stores the file; a removed one still in its restore window comes back (lifecycle.ts). */
  store(projectId: number, uuid: string, initiator: Initiator): Promise<FileRecord> {
    return this.lifecycle.store(projectId, uuid, initiator);
  }

  /**
   * Marks the file removed at once; its bytes are reclaimed by a job in the same transaction, due
   * once the removal can no longer be taken back (`how`; by default at once).
   */
  remove(projectId: number, uuid: string, initiator: Initiator, how?: Removal): Promise<FileRecord> {
    return this.lifecycle.remove(projectId, uuid, initiator, how);
  }

  /** Batch store / delete: per-id problems instead of failing the whole request (lifecycle.ts). */
  batch(projectId: number, ids: string[], action: 'store' | 'remove', initiator: Initiator, how?: Removal): Promise<{ problems: Record<string, string>; result: FileRecord[] }> {
    return this.lifecycle.batch(projectId, ids, action, initiator, how);
  }

  setMetadataKey(projectId: number, uuid: string, key: string, value: unknown, initiator: Initiator): Promise<{ value: string; created: boolean }> {
    return this.edits.setMetadataKey(projectId, uuid, key, value, initiator);
  }

  deleteMetadataKey(projectId: number, uuid: string, key: string, initiator: Initiator): Promise<void> {
    return this.edits.deleteMetadataKey(projectId, uuid, key, initiator);
  }

  /** Writes `appdata.<name>` with its events, and `alongside`, in one transaction (edits.ts). */
  writeAddonResult(projectId: number, uuid: string, w: AddonResultWrite, alongside: (trx: DbOrTrx, written: boolean) => Promise<void>): Promise<boolean> {
    return this.edits.writeAddonResult(projectId, uuid, w, alongside);
  }

  /** Tags: `replace` sets the whole list, `update` deletes then adds (edits.ts). */
  changeTags(projectId: number, uuid: string, change: { replace: string[] } | { add: string[]; delete: string[] }, initiator: Initiator): Promise<TagChange> {
    return this.edits.changeTags(projectId, uuid, change, initiator);
  }

  /** Expiry sweep: unstored files older than the TTL become removed; their bytes go by job. */
  expireUnstored(ttlMs: number, batchSize?: number): Promise<number> {
    return this.lifecycle.expireUnstored(ttlMs, batchSize);
  }

  /** Job body: the removed file forgets its key, and the bytes go once no other file uses them (lifecycle.ts). */
  reclaimBytes(projectId: number, uuid: string, blobKey: string, removedUs?: number): Promise<void> {
    return this.lifecycle.reclaimBytes(projectId, uuid, blobKey, removedUs);
  }
}
