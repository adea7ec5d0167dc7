/** Queries of the conversion_jobs table: one row per accepted conversion path. */
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Db, DbOrTrx } from '../db/connect.js';
import { literalLimit } from '../db/reusable-query.js';
import type { Database } from '../db/schema.js';
import type { ConversionJobsTable } from '../db/tables/conversions.js';
import { nowUs } from '../core/time.js';

export type ConversionRow = Selectable<ConversionJobsTable>;
export type NewConversion = Omit<Insertable<ConversionJobsTable>, 'id'>;

export class ConversionRepo {
  private readonly db: Kysely<Database>;

  constructor(store: Db) {
    this.db = store.kysely;
  }

  async insert(trx: DbOrTrx, row: NewConversion): Promise<number> {
    const inserted = await trx.insertInto('conversion_jobs').values(row).returning('id').executeTakeFirstOrThrow();
    return Number(inserted.id);
  }

  async get(id: number): Promise<ConversionRow | undefined> {
    const row = await this.db.selectFrom('conversion_jobs').selectAll().where('id', '=', id).executeTakeFirst();
    return row && { ...row, id: Number(row.id), project_id: Number(row.project_id) };
  }

  /** Only a job still waiting or running moves on (a finished one stays as it ended). */
  async setStatus(id: number, status: 'processing' | 'failed', error: string | null = null): Promise<void> {
    await this.db.updateTable('conversion_jobs').set({ status, error, updated_us: nowUs() }).where('id', '=', id).where('status', 'in', ['pending', 'processing']).execute();
  }

  async finish(id: number, group: { uuid: string; count: number } | null): Promise<void> {
    await this.db
      .updateTable('conversion_jobs')
      .set({ status: 'finished', error: null, updated_us: nowUs(), ...(group && { group_uuid: group.uuid, group_count: group.count }) })
      .where('id', '=', id)
      .execute();
  }

  /** The newest finished conversion of a source to exactly this target (CDN conversion URLs). */
  async finishedFor(projectId: number, sourceUuid: string, kind: 'document' | 'video', target: string): Promise<ConversionRow | undefined> {
    return this.db
      .selectFrom('conversion_jobs')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('source_uuid', '=', sourceUuid)
      .where('kind', '=', kind)
      .where('target', '=', target)
      .where('status', '=', 'finished')
      .orderBy('id', 'desc')
      .limit(literalLimit(1))
      .executeTakeFirst();
  }

  /** Finished document conversions of a source that saved their pages in a group, oldest first. */
  async groupsOf(projectId: number, sourceUuid: string): Promise<ConversionRow[]> {
    return this.db
      .selectFrom('conversion_jobs')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('source_uuid', '=', sourceUuid)
      .where('kind', '=', 'document')
      .where('status', '=', 'finished')
      .where('group_uuid', 'is not', null)
      .orderBy('id')
      .execute();
  }
}
