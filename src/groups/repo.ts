/** Queries for groups and their members. Every query is scoped to a project except the CDN's. */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Db, DbOrTrx } from '../db/connect.js';
import { readCounters } from '../db/project-counters.js';
import { literalLimit, ReusableQueriesByShape } from '../db/reusable-query.js';

export interface GroupRecord {
  uuid: string;
  projectId: number;
  filesCount: number;
  createdUs: number;
}

export interface GroupMember {
  fileUuid: string;
  effects: string;
}

export interface GroupListQuery {
  projectId: number;
  limit: number;
  desc: boolean;
  /** Exclusive cursor: strictly after (asc) or before (desc) this time. */
  afterUs: number | null;
  /** Exclusive reverse cursor for `previous` links. */
  beforeUs: number | null;
}

type Row = Database['file_groups'];
type PageArgs = [projectId: number, afterUs: number | null, beforeUs: number | null];
const toRecord = (r: Row): GroupRecord => ({ uuid: r.uuid, projectId: Number(r.project_id), filesCount: Number(r.files_count), createdUs: Number(r.created_us) });

export class GroupRepo {
  private readonly db: Kysely<Database>;
  /** List pages by shape (order, which cursors are set), each compiled once (db/reusable-query.ts). */
  private readonly pageQueries = new ReusableQueriesByShape<PageArgs, Row>();

  constructor(store: Db) {
    this.db = store.kysely;
  }

  async insert(trx: DbOrTrx, g: GroupRecord, members: GroupMember[]): Promise<void> {
    await trx.insertInto('file_groups').values({ uuid: g.uuid, project_id: g.projectId, files_count: g.filesCount, created_us: g.createdUs }).execute();
    // Chunked: SQLite caps bound parameters per statement.
    for (let i = 0; i < members.length; i += 200) {
      const chunk = members.slice(i, i + 200).map((m, j) => ({ group_uuid: g.uuid, position: i + j, file_uuid: m.fileUuid, effects: m.effects }));
      await trx.insertInto('file_group_members').values(chunk).execute();
    }
  }

  async get(projectId: number | null, uuid: string): Promise<GroupRecord | null> {
    let q = this.db.selectFrom('file_groups').selectAll().where('uuid', '=', uuid);
    if (projectId !== null) q = q.where('project_id', '=', projectId);
    const r = await q.executeTakeFirst();
    return r ? toRecord(r) : null;
  }

  async members(uuid: string): Promise<GroupMember[]> {
    const rows = await this.db.selectFrom('file_group_members').select(['file_uuid', 'effects']).where('group_uuid', '=', uuid).orderBy('position').execute();
    return rows.map((r) => ({ fileUuid: r.file_uuid, effects: r.effects }));
  }

  async member(uuid: string, position: number): Promise<GroupMember | null> {
    const r = await this.db.selectFrom('file_group_members').select(['file_uuid', 'effects']).where('group_uuid', '=', uuid).where('position', '=', position).executeTakeFirst();
    return r ? { fileUuid: r.file_uuid, effects: r.effects } : null;
  }

  async list(q: GroupListQuery): Promise<GroupRecord[]> {
    // A `previous` page walks backwards from its cursor, then is flipped back into display order.
    const backwards = q.beforeUs !== null && q.afterUs === null;
    const desc = backwards ? !q.desc : q.desc;
    const hasAfter = q.afterUs !== null;
    const hasBefore = q.beforeUs !== null;
    const page = this.pageQueries.of(`${q.desc}:${hasAfter}:${hasBefore}:${q.limit}`, (db, projectId, afterUs, beforeUs) => {
      let s = db.selectFrom('file_groups').selectAll().where('project_id', '=', projectId);
      if (hasAfter) s = s.where('created_us', q.desc ? '<' : '>', afterUs);
      if (hasBefore) s = s.where('created_us', q.desc ? '>' : '<', beforeUs);
      return s.orderBy('created_us', desc ? 'desc' : 'asc').limit(literalLimit(q.limit));
    });
    const records = (await page(this.db, q.projectId, q.afterUs, q.beforeUs)).rows.map(toRecord);
    return backwards ? records.reverse() : records;
  }

  /** The group list's `total`, from the project's counters (db/project-counters.ts). */
  async count(projectId: number): Promise<number> {
    return (await readCounters(this.db, projectId)).groups;
  }

  /**
   * Deletes the group object only (inside the caller's transaction); its files are untouched. False
   * when there was none, judged by the DELETE itself: of two concurrent deletes only one removes
   * the row (the other waits for it on PostgreSQL, then deletes nothing), so only one answers 204
   * and moves the counter.
   */
  async delete(trx: DbOrTrx, projectId: number, uuid: string): Promise<boolean> {
    const found = await trx.selectFrom('file_groups').select('uuid').where('uuid', '=', uuid).where('project_id', '=', projectId).executeTakeFirst();
    if (!found) return false;
    await trx.deleteFrom('file_group_members').where('group_uuid', '=', uuid).execute();
    const r = await trx.deleteFrom('file_groups').where('uuid', '=', uuid).where('project_id', '=', projectId).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
