/** Queries of the add-ons feature: executions and each project's add-ons run on upload. */
import type { Kysely, Selectable } from 'kysely';
import type { Db, DbOrTrx } from '../db/connect.js';
import { reusableQuery } from '../db/reusable-query.js';
import { TransactionReads } from '../db/transaction-reads.js';
import type { Database } from '../db/schema.js';
import type { AddonExecutionsTable, AddonStatus } from '../db/tables/addons.js';

// Read in every new file's transaction (the upload hook): compiled once per store (db/reusable-query.ts).
const onUploadSetting = reusableQuery((db: DbOrTrx, projectId: number) => db.selectFrom('addon_project_settings').select('on_upload').where('project_id', '=', projectId));
/** The setting's text (or null), read once per SQLite transaction: a batch of new files shares one (db/transaction-reads.ts). */
const onUploadReads = new TransactionReads<string | null>();

export type ExecutionRow = Selectable<AddonExecutionsTable>;

export interface NewExecution {
  requestId: string;
  projectId: number;
  addon: string;
  target: string;
  /** The request's `params` as sent (the run parses them again). */
  params: unknown;
  resultFile: string | null;
  nowUs: number;
}

export const runningKey = (addon: string, target: string): string => `${addon}:${target}`;

export class AddonRepo {
  private readonly db: Kysely<Database>;

  constructor(store: Db) {
    this.db = store.kysely;
  }

  /** Throws a unique violation when the same add-on already runs on the same file. */
  async insert(trx: DbOrTrx, e: NewExecution): Promise<void> {
    await trx
      .insertInto('addon_executions')
      .values({
        request_id: e.requestId,
        project_id: e.projectId,
        addon: e.addon,
        target: e.target,
        params: JSON.stringify(e.params ?? {}),
        status: 'in_progress',
        running_key: runningKey(e.addon, e.target),
        result_file: e.resultFile,
        error: null,
        created_us: e.nowUs,
        updated_us: e.nowUs,
      })
      .execute();
  }

  async get(requestId: string, db: DbOrTrx = this.db): Promise<ExecutionRow | undefined> {
    return db.selectFrom('addon_executions').selectAll().where('request_id', '=', requestId).executeTakeFirst();
  }

  /** Final state; only an execution still in progress moves (a re-run after a crash finds it finished). */
  async finish(requestId: string, status: Exclude<AddonStatus, 'in_progress'>, error: string | null, nowUs: number, db: DbOrTrx = this.db): Promise<boolean> {
    const r = await db
      .updateTable('addon_executions')
      .set({ status, error, running_key: null, updated_us: nowUs })
      .where('request_id', '=', requestId)
      .where('status', '=', 'in_progress')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Finished executions older than the cutoff (status answers `unknown` for them afterwards). */
  async prune(beforeUs: number): Promise<void> {
    await this.db.deleteFrom('addon_executions').where('status', '!=', 'in_progress').where('created_us', '<', beforeUs).execute();
  }

  async onUpload(projectId: number, db: DbOrTrx = this.db): Promise<string[]> {
    const text = await onUploadReads.once(db, String(projectId), async () => (await onUploadSetting(db, projectId)).rows[0]?.on_upload ?? null);
    return text !== null ? (JSON.parse(text) as string[]) : [];
  }

  async setOnUpload(projectId: number, names: string[], nowUs: number): Promise<void> {
    const onUpload = JSON.stringify(names);
    await this.db
      .insertInto('addon_project_settings')
      .values({ project_id: projectId, on_upload: onUpload, updated_us: nowUs })
      .onConflict((oc) => oc.column('project_id').doUpdateSet({ on_upload: onUpload, updated_us: nowUs }))
      .execute();
  }
}
