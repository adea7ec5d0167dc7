/**
 * A file's life after its upload: stored, removed (at once, in a batch, or by the expiry sweep of
 * unstored files), its bytes reclaimed by a job. Every change commits with its events.
 *
 * A removal through the REST API can be taken back (docs/files.md, "Removing and restoring"): the
 * row keeps its blob and `restore_until_us`, and its reclaim job is due only then. Storing the
 * file before that restores it (file.stored, as any store). The job, locked on the row, reclaims
 * nothing from a file restored, or removed again (that removal has a job of its own). Removals by
 * the expiry sweep and by add-ons (an infected file) are final: their bytes go at once.
 */
import type { BlobStore } from '../blobs/store.js';
import type { Db, DbOrTrx } from '../db/connect.js';
import { addDeltas, adjustCounters, fileMove, fileState, type CounterDelta } from '../db/project-counters.js';
import type { FileRepo } from './repo.js';
import type { ContentRepo } from './contents/repo.js';
import { enqueue } from '../jobs/queue.js';
import type { FileEventOutbox } from '../jobs/event-outbox.js';
import { systemInitiator, type Initiator } from '../jobs/file-events.js';
import type { FileRecord } from '../core/file-record.js';
import { parseUuid } from '../core/ids.js';
import { nowUs } from '../core/time.js';
import { enqueueLaterDigest } from './digest-later.js';
import { restErrors } from '../core/error-catalogue/rest.js';
import { BLOB_DELETE_JOB } from './job-names.js';
import type { Removal } from '../file-contract.js';

export const fileNotFound = restErrors.notFound;
const removedForGood = restErrors.removedNotStorable;

const FINAL: Removal = { restoreMs: 0 };

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

  /**
   * Tells the onRemoved listeners that the file's removal (or its restore) committed: the CDN
   * drops the row it cached either way.
   */
  removed(uuid: string): void {
    for (const listener of this.removedListeners) listener(uuid);
  }

  /** Stores the file; a removed one within its restore window comes back (else 400). */
  async store(projectId: number, uuid: string, initiator: Initiator): Promise<FileRecord> {
    const { before, stored } = await this.db.transaction(async (trx) => {
      const file = await this.lockOrThrow(trx, projectId, uuid);
      const stored = await this.storeLocked(trx, file, initiator);
      await adjustCounters(trx, projectId, moveOf(file, stored));
      return { before: file, stored };
    });
    if (before.removedUs !== null) this.removed(stored.uuid);
    return stored;
  }

  private async storeLocked(trx: DbOrTrx, file: FileRecord, initiator: Initiator): Promise<FileRecord> {
    if (file.removedUs !== null) {
      const until = (await this.repo.restorableUntil(trx, file.projectId, [file.uuid])).get(file.uuid);
      if (!isRestorable(file, until, nowUs())) throw removedForGood();
    } else if (file.storedUs !== null) return file;
    const t = nowUs();
    await this.repo.update(trx, file.projectId, file.uuid, { stored_us: t, removed_us: null, restore_until_us: null });
    await this.afterRestore(trx, file);
    await this.events.record(trx, { projectId: file.projectId, event: 'file.stored', uuid: file.uuid, initiator });
    return { ...file, storedUs: t, removedUs: null };
  }

  /**
   * A large file removed before its digests were computed was skipped by that job
   * (digest-later.ts): a restored one gets its job again.
   */
  private async afterRestore(trx: DbOrTrx, file: FileRecord): Promise<void> {
    if (file.removedUs !== null && file.md5 === '' && file.blobKey) await enqueueLaterDigest(trx, file);
  }

  /**
   * Marks the file removed at once; its bytes are reclaimed by a job in the same transaction, due
   * when the removal can no longer be taken back (`how.restoreMs` from now).
   */
  async remove(projectId: number, uuid: string, initiator: Initiator, how: Removal = FINAL): Promise<FileRecord> {
    const removed = await this.db.transaction(async (trx) => {
      const file = await this.lockOrThrow(trx, projectId, uuid);
      const removed = await this.removeLocked(trx, file, initiator, 'file.deleted', how);
      await adjustCounters(trx, projectId, moveOf(file, removed));
      return removed;
    });
    this.removed(removed.uuid);
    return removed;
  }

  async removeLocked(trx: DbOrTrx, file: FileRecord, initiator: Initiator, event: 'file.deleted' | null, how: Removal = FINAL): Promise<FileRecord> {
    if (file.removedUs !== null) return file;
    const t = nowUs();
    const until = how.restoreMs > 0 && file.blobKey ? t + how.restoreMs * 1000 : null;
    // A removed file leaves its S3 key free for the next PutObject (keys are unique among live files).
    const removal = { removed_us: t, stored_us: null, restore_until_us: until };
    await this.repo.update(trx, file.projectId, file.uuid, file.objectKey === undefined ? removal : { ...removal, object_key: null });
    if (file.blobKey) {
      await enqueue(trx, { kind: BLOB_DELETE_JOB, payload: { projectId: file.projectId, uuid: file.uuid, blobKey: file.blobKey, removedUs: t }, ...(until === null ? {} : { runAtUs: until }) });
    }
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
  async batch(projectId: number, ids: string[], action: 'store' | 'remove', initiator: Initiator, how: Removal = FINAL): Promise<{ problems: Record<string, string>; result: FileRecord[] }> {
    const problems: Record<string, string> = {};
    const wanted = new Map<string, string>();
    for (const raw of ids) {
      const id = parseUuid(raw);
      if (!id) problems[raw] = 'Invalid';
      else wanted.set(id, raw);
    }
    const result: FileRecord[] = [];
    const restored: string[] = [];
    await this.db.transaction(async (trx) => {
      result.length = 0;
      restored.length = 0;
      const locked = await this.repo.getManyForUpdate(trx, projectId, [...wanted.keys()]);
      const removedOnes = [...locked.values()].filter((f) => f.removedUs !== null).map((f) => f.uuid);
      const restorable = action === 'store' ? await this.repo.restorableUntil(trx, projectId, removedOnes) : new Map<string, number>();
      const moves: CounterDelta[] = [];
      const toStore: FileRecord[] = [];
      const t = nowUs();
      for (const [id, raw] of wanted) {
        const file = locked.get(id);
        if (!file) {
          problems[raw] = 'Missing in the project';
          continue;
        }
        if (action === 'store' && file.removedUs !== null && !isRestorable(file, restorable.get(file.uuid), t)) {
          problems[raw] = 'File is removed';
          continue;
        }
        let changed = file;
        if (action === 'remove') changed = await this.removeLocked(trx, file, initiator, 'file.deleted', how);
        else if (file.storedUs === null) {
          toStore.push(file);
          changed = { ...file, storedUs: t, removedUs: null };
          if (file.removedUs !== null) restored.push(file.uuid);
        }
        moves.push(moveOf(file, changed));
        result.push(changed);
      }
      await this.storeMany(trx, projectId, toStore, t, initiator);
      await adjustCounters(trx, projectId, addDeltas(...moves));
    });
    if (action === 'remove') for (const f of result) this.removed(f.uuid);
    for (const uuid of restored) this.removed(uuid);
    return { problems, result };
  }

  /** storeLocked for several locked, unstored (or restorable) files of one project: one UPDATE, one INSERT of events. */
  private async storeMany(trx: DbOrTrx, projectId: number, files: FileRecord[], t: number, initiator: Initiator): Promise<void> {
    if (files.length === 0) return;
    await this.repo.markStored(trx, projectId, files.map((f) => f.uuid), t);
    for (const f of files) await this.afterRestore(trx, f);
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
   * `removedUs` names the removal the job was written for: a file restored since (not removed), or
   * removed again (that removal has its own job, due later), keeps its bytes. The row is locked
   * first, so a restore and this job never interleave.
   */
  async reclaimBytes(projectId: number, uuid: string, blobKey: string, removedUs?: number): Promise<void> {
    const unused = await this.db.transaction(async (trx) => {
      const file = await this.repo.getForUpdate(trx, projectId, uuid);
      if (file && file.blobKey === blobKey && (file.removedUs === null || (removedUs !== undefined && file.removedUs !== removedUs))) return false;
      return this.contents.release(trx, projectId, uuid, blobKey);
    });
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

/** A removed file can be stored again: its restore window is open and its bytes are still there. */
function isRestorable(file: FileRecord, restoreUntilUs: number | undefined, now: number): boolean {
  return restoreUntilUs !== undefined && now < restoreUntilUs && file.blobKey !== null;
}
