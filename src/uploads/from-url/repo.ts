/** Queries of the from_url_tasks table: one row per accepted URL (see tasks.ts). */
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Db, DbOrTrx } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import type { FromUrlTasksTable } from '../../db/tables/uploads.js';

export type TaskRow = Selectable<FromUrlTasksTable>;

/** The states a download may still move out of. */
const UNFINISHED = ['waiting', 'progress'] as const;

export class FromUrlTaskRepo {
  private readonly db: Kysely<Database>;

  constructor(store: Db) {
    this.db = store.kysely;
  }

  async insert(trx: DbOrTrx, row: Insertable<FromUrlTasksTable>): Promise<void> {
    await trx.insertInto('from_url_tasks').values(row).execute();
  }

  async get(token: string): Promise<TaskRow | undefined> {
    return this.db.selectFrom('from_url_tasks').selectAll().where('token', '=', token).executeTakeFirst();
  }

  /** Bytes so far; ignored once the task has finished. A null `total` keeps the one recorded. */
  async progress(token: string, done: number, total: number | null, updatedUs: number): Promise<void> {
    await this.db
      .updateTable('from_url_tasks')
      .set((eb) => ({ status: 'progress', done, total: total ?? eb.ref('total'), updated_us: updatedUs }))
      .where('token', '=', token)
      .where('status', 'in', UNFINISHED)
      .execute();
  }

  async succeed(token: string, fileUuid: string, updatedUs: number): Promise<void> {
    await this.db.updateTable('from_url_tasks').set({ status: 'success', file_uuid: fileUuid, updated_us: updatedUs }).where('token', '=', token).execute();
  }

  /** The final error; ignored once the task has finished. */
  async fail(token: string, code: string, message: string, updatedUs: number): Promise<void> {
    await this.db
      .updateTable('from_url_tasks')
      .set({ status: 'error', error: message, error_code: code, updated_us: updatedUs })
      .where('token', '=', token)
      .where('status', 'in', UNFINISHED)
      .execute();
  }

  async delete(token: string): Promise<void> {
    await this.db.deleteFrom('from_url_tasks').where('token', '=', token).execute();
  }
}
