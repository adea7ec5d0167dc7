/** Changes to a file's metadata, add-on results (appdata) and tags, each with its file.info_updated event. */
import type { Db, DbOrTrx } from '../db/connect.js';
import { adjustCounters } from '../db/project-counters.js';
import type { FileRepo } from './repo.js';
import type { FileEventOutbox } from '../jobs/event-outbox.js';
import type { Initiator } from '../jobs/file-events.js';
import type { AppdataEntry } from '../core/file-record.js';
import { validateKeyCount, validateMetadataKey, validateMetadataValue } from '../core/metadata.js';
import { formatUs, nowUs } from '../core/time.js';
import { checkTagCount, diffTags, type TagChange } from '../core/tags.js';
import { fileNotFound, moveOf, type FileLifecycle } from './lifecycle.js';
import { restErrors } from '../core/error-catalogue/rest.js';
import type { AddonResultWrite } from '../file-contract.js';

export class FileEdits {
  constructor(
    private readonly db: Db,
    private readonly repo: FileRepo,
    private readonly events: FileEventOutbox,
    private readonly lifecycle: FileLifecycle,
  ) {}

  async setMetadataKey(projectId: number, uuid: string, key: string, value: unknown, initiator: Initiator): Promise<{ value: string; created: boolean }> {
    validateMetadataKey(key);
    const clean = validateMetadataValue(key, value);
    return this.db.transaction(async (trx) => {
      const file = await this.lifecycle.lockOrThrow(trx, projectId, uuid);
      if (file.removedUs !== null) throw restErrors.removedMetadataFixed();
      const previous = ownValue(file.metadata, key);
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
      const file = await this.lifecycle.lockOrThrow(trx, projectId, uuid);
      if (file.removedUs !== null) throw restErrors.removedMetadataFixed();
      const previous = ownValue(file.metadata, key);
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
        const removed = await this.lifecycle.removeLocked(trx, { ...file, appdata }, w.initiator, 'file.deleted');
        removedUuid = file.uuid;
        await adjustCounters(trx, projectId, moveOf(file, removed));
      }
      await alongside(trx, true);
      return true;
    });
    if (removedUuid) this.lifecycle.removed(removedUuid);
    return written;
  }

  /**
   * Tags: `replace` sets the whole list, `update` deletes then adds (wire-reference §2.13). A
   * change commits with its file.info_updated event (previous_values.tags = the list before).
   */
  async changeTags(projectId: number, uuid: string, change: { replace: string[] } | { add: string[]; delete: string[] }, initiator: Initiator): Promise<TagChange> {
    return this.db.transaction(async (trx) => {
      const file = await this.lifecycle.lockOrThrow(trx, projectId, uuid);
      if (file.removedUs !== null) throw restErrors.removedTagsFixed();
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
}

/** A metadata key's value, own keys only: `__proto__` is a valid key, and must not find Object.prototype. */
function ownValue(metadata: Record<string, string>, key: string): string | undefined {
  return Object.hasOwn(metadata, key) ? metadata[key] : undefined;
}
