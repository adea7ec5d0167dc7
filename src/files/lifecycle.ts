/**
 * A file's life after its upload: stored, removed (at once, in a batch, or by the expiry sweep of
 * unstored files), its bytes reclaimed by a job. Every change commits with its events.
 */
import type { BlobStore } from '../blobs/store.js';
import type { Db, DbOrTrx } from '../db/connect.js';
import { addDeltas, adjustCounters, fileMove, fileState, type CounterDelta } from '../db/project-counters.js';
import type { FileRepo } from './repo.js';
import type { ContentRepo } from './contents/repo.js';
import { enqueue } from '../jobs/queue.js';
import { AppError } from '../core/errors.js';
import type { FileEventOutbox } from '../jobs/event-outbox.js';
import { systemInitiator, type Initiator } from '../jobs/file-events.js';
import type { FileRecord } from '../core/file-record.js';
import { parseUuid } from '../core/ids.js';
import { nowUs } from '../core/time.js';

export const BLOB_DELETE_JOB = 'blob.delete';
export const EXPIRY_SWEEP_JOB = 'files.expire';

export const fileNotFound = (): AppError => new AppError(404, 'FileNotFoundError', 'Not found.');

export class FileLifecycle {
  private readonly removedListeners = new Set<(uuid: string) => void>();

  constructor(
    private readonly db: Db,
    private readonly blobs: BlobStore,
    private readonly repo: FileRepo,
    private readonly contents: ContentRepo,
    private readonly events: FileEventOutbox,
  ) {}

  /**
   * Calls `listener` with each file's uuid after its removal commits (the CDN drops its cached
   * row). Returns the unsubscribe function.
   */
  onRemoved(listener: (uuid: string) => void): () => void {
    this.removedListeners.add(listener);
    return () => void this.removedListeners.delete(listener);
  }

  /** Tells the onRemoved listeners that the file's removal committed. */
  removed(uuid: string): void {
    for (const listener of this.removedListeners) listener(uuid);
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

  async removeLocked(trx: DbOrTrx, file: FileRecord, initiator: Initiator, event: 'file.deleted' | null): Promise<FileRecord> {
    if (file.removedUs !== null) return file;
    const t = nowUs();
    // A removed file leaves its S3 key free for the next PutObject (keys are unique among live files).
    await this.repo.update(trx, file.projectId, file.uuid, file.objectKey === undefined ? { removed_us: t, stored_us: null } : { removed_us: t, stored_us: null, object_key: null });
    if (file.blobKey) await enqueue(trx, { kind: BLOB_DELETE_JOB, payload: { projectId: file.projectId, uuid: file.uuid, blobKey: file.blobKey } });
    if (event) await this.events.record(trx, { projectId: file.projectId, event, uuid: file.uuid, initiator });
    const { objectKey: _freed, ...rest } = file;
    return { ...rest, removedUs: t, storedUs: null };
  }

  /**
   * Inside a new file's transaction: removes the live file its S3 key names (a PutObject replaces
   * it), with its `file.deleted`. Answers the removed file's uuid (tell `removed` after the commit).
   */
  async removeObjectHolder(trx: DbOrTrx, projectId: number, key: string, initiator: Initiator): Promise<string | null> {
    const holder = await this.repo.objectHolderForUpdate(trx, projectId, key);
    if (!holder) return null;
    const removed = await this.removeLocked(trx, holder, initiator, 'file.deleted');
    await adjustCounters(trx, projectId, moveOf(holder, removed));
    return holder.uuid;
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

  /** The file locked for a change (getForUpdate), or a 404. */
  async lockOrThrow(trx: DbOrTrx, projectId: number, uuid: string): Promise<FileRecord> {
    const id = parseUuid(uuid);
    const file = id ? await this.repo.getForUpdate(trx, projectId, id) : null;
    if (!file) throw fileNotFound();
    return file;
  }
}

/** The counters' move of a file changed by storeLocked / removeLocked (empty when it was already there). */
export function moveOf(before: FileRecord, after: FileRecord): CounterDelta {
  return fileMove(fileState(before), fileState(after));
}
