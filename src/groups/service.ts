/**
 * Groups: immutable, ordered collections of a project's files (spec "Groups"). A group is created
 * once from file references and never changes; deleting it leaves its files alone.
 */
import type { AppContext } from '../context.js';
import { AppError } from '../core/errors.js';
import type { FileRecord } from '../core/file-record.js';
import { newUuid, parseUuid } from '../core/ids.js';
import { nowUs } from '../core/time.js';
import type { FileRef } from '../http/cdn/file-ref.js';
import { effectsText } from './file-ref.js';
import { isUniqueViolation } from '../db/errors.js';
import { adjustCounters } from '../db/project-counters.js';
import { GroupRepo, type GroupListQuery, type GroupMember, type GroupRecord } from './repo.js';
import { restErrors } from '../core/error-catalogue/rest.js';

/** Spec: a group holds up to 1000 files. */
export const MAX_GROUP_FILES = 1000;

export interface GroupEntry {
  /** null when the file was removed (or purged) since the group was made. */
  file: FileRecord | null;
  effects: string;
}

export const groupId = (g: GroupRecord): string => `${g.uuid}~${g.filesCount}`;

/** `<uuid>~N` -> its parts, or null when malformed. */
export function parseGroupId(text: string): { uuid: string; count: number } | null {
  const m = /^([0-9a-fA-F-]{36})~(\d{1,4})$/.exec(text.trim());
  const uuid = m ? parseUuid(m[1] ?? '') : null;
  if (!m || !uuid) return null;
  return { uuid, count: Number(m[2]) };
}

export class GroupService {
  private readonly repo: GroupRepo;

  /** Needs only the store and the files (the import command builds one without a running node). */
  constructor(private readonly ctx: Pick<AppContext, 'db' | 'files'>) {
    this.repo = new GroupRepo(ctx.db);
  }

  /**
   * Every referenced file must belong to the project and not be removed; otherwise nothing is
   * created and the caller gets `notFound()`.
   */
  async create(projectId: number, refs: FileRef[], notFound: () => AppError, opts: { uuid?: string } = {}): Promise<GroupRecord> {
    const unique = [...new Set(refs.map((r) => r.uuid))];
    const files = await this.ctx.files.findMany(projectId, unique);
    const live = new Set(files.filter((f) => f.removedUs === null).map((f) => f.uuid));
    if (unique.some((u) => !live.has(u))) throw notFound();
    const members = refs.map((r) => ({ fileUuid: r.uuid, effects: effectsText(r.written) }));
    for (let attempt = 0; ; attempt++) {
      // A uuid chosen in advance (a conversion answers it before the group exists) is kept.
      const g: GroupRecord = { uuid: opts.uuid ?? newUuid(), projectId, filesCount: refs.length, createdUs: nowUs() };
      try {
        await this.ctx.db.transaction(async (trx) => {
          await this.repo.insert(trx, g, members);
          await adjustCounters(trx, projectId, { groups: 1 });
        });
        return g;
      } catch (err) {
        // Creation times are unique per project (exact list cursor); another node may have taken this one.
        if (attempt < 5 && isUniqueViolation(err)) continue;
        throw err;
      }
    }
  }

  /**
   * A group copied from another server (`stowage import`): same uuid, order, operations and
   * creation time (moved on by microseconds when another group here has that time). Members may
   * name files that are gone (removed in the source): they read as null, as there. 'present'
   * when this project already has it; a uuid held otherwise throws a conflict.
   */
  async restore(projectId: number, g: { uuid: string; createdUs: number; members: GroupMember[] }): Promise<'imported' | 'present'> {
    for (let shift = 0; ; shift++) {
      const existing = await this.repo.get(null, g.uuid);
      if (existing) {
        if (existing.projectId === projectId && existing.filesCount === g.members.length) return 'present';
        throw restErrors.groupConflict();
      }
      const record: GroupRecord = { uuid: g.uuid, projectId, filesCount: g.members.length, createdUs: g.createdUs + shift };
      try {
        await this.ctx.db.transaction(async (trx) => {
          await this.repo.insert(trx, record, g.members);
          await adjustCounters(trx, projectId, { groups: 1 });
        });
        return 'imported';
      } catch (err) {
        if (shift < 50 && isUniqueViolation(err)) continue;
        throw err;
      }
    }
  }

  /** The group named by a public id, in the project (or any project when null); null when unknown. */
  async find(projectId: number | null, id: string): Promise<GroupRecord | null> {
    const parsed = parseGroupId(id);
    if (!parsed) return null;
    const g = await this.repo.get(projectId, parsed.uuid);
    return g && g.filesCount === parsed.count ? g : null;
  }

  list(q: GroupListQuery): Promise<GroupRecord[]> {
    return this.repo.list(q);
  }

  count(projectId: number): Promise<number> {
    return this.repo.count(projectId);
  }

  /** Deletes the group object only; its files are untouched. False when there was none. */
  delete(projectId: number, uuid: string): Promise<boolean> {
    return this.ctx.db.transaction(async (trx) => {
      const deleted = await this.repo.delete(trx, projectId, uuid);
      if (deleted) await adjustCounters(trx, projectId, { groups: -1 });
      return deleted;
    });
  }

  /** The entry at `position` (0-based), or null past the end. */
  member(g: GroupRecord, position: number): Promise<GroupMember | null> {
    return this.repo.member(g.uuid, position);
  }

  async entries(g: GroupRecord): Promise<GroupEntry[]> {
    const members = await this.repo.members(g.uuid);
    const files = await this.ctx.files.findMany(g.projectId, [...new Set(members.map((m) => m.fileUuid))]);
    const byUuid = new Map(files.map((f) => [f.uuid, f]));
    return members.map((m) => {
      const f = byUuid.get(m.fileUuid);
      return { file: f && f.removedUs === null ? f : null, effects: m.effects };
    });
  }
}
