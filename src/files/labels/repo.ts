/**
 * file_labels (migration 0017, docs/files.md "Search"): the lower-cased label names of each file's
 * appdata (core/appdata-labels.ts), kept by the files repository in the transaction of every
 * appdata write and gone with the file row (foreign key, on delete cascade).
 */
import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import { appdataLabelKeys, labelKey } from '../../core/appdata-labels.js';
import type { Database } from '../../db/schema.js';
import type { DbOrTrx } from '../../db/connect.js';
import { boundLimit } from '../../db/reusable-query.js';
import type { FileRecord } from '../../core/file-record.js';

const ROWS_PER_INSERT = 500;
/** A label on more than one file in this many of the project's: walk the project instead (below). */
const COMMON_SHARE = 6;

/** A file's label rows, in chunks that stay under both databases' bound-parameter limits. */
export async function insertLabels(db: DbOrTrx, projectId: number, uuid: string, appdata: FileRecord['appdata']): Promise<void> {
  const rows = appdataLabelKeys(appdata).map((label_lower) => ({ project_id: projectId, label_lower, uuid }));
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) await db.insertInto('file_labels').values(rows.slice(i, i + ROWS_PER_INSERT)).execute();
}

export async function replaceLabels(db: DbOrTrx, projectId: number, uuid: string, appdata: FileRecord['appdata']): Promise<void> {
  await db.deleteFrom('file_labels').where('uuid', '=', uuid).execute();
  await insertLabels(db, projectId, uuid, appdata);
}

/** Search's condition: any of the labels, through file_labels' primary key. */
export function labelsCondition(eb: ExpressionBuilder<Database, 'files'>, projectId: number, labels: string[]): Expression<SqlBool> {
  const keys = [...new Set(labels.map(labelKey))];
  return eb('uuid', 'in', eb.selectFrom('file_labels').select('file_labels.uuid').where('file_labels.project_id', '=', projectId).where('file_labels.label_lower', 'in', keys));
}

/**
 * SQLite only (PostgreSQL's planner weighs each label by its own statistics): whether a labels
 * search should start from the label rows rather than walk the project in its sort order.
 * SQLite without ANALYZE guesses a project is tiny and would always walk it, whole when the label is
 * rare; starting from the labels costs a lookup per match, which loses when the label is on a large
 * share of the project. Both counts stop early, so deciding costs at most the label's own rows.
 */
export async function startFromLabels(db: DbOrTrx, projectId: number, labels: string[]): Promise<boolean> {
  const keys = [...new Set(labels.map(labelKey))];
  const m = await db.selectFrom('file_labels').select((eb) => eb.fn.countAll<number>().as('n')).where('project_id', '=', projectId).where('label_lower', 'in', keys).executeTakeFirstOrThrow();
  const bound = Number(m.n) * COMMON_SHARE;
  const r = await sql<{ n: number }>`select count(*) as n from (select 1 from files where project_id = ${projectId} limit ${boundLimit(bound + 1)}) as p`.execute(db);
  return Number(r.rows[0]?.n ?? 0) > bound;
}
