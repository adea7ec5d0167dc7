import { sql, type Kysely } from 'kysely';
import { appdataLabelKeys } from '../../core/appdata-labels.js';
import type { MigrationStep } from './types.js';

/**
 * Indexed `appdata_labels` search (docs/files.md "Search"): one row per (project, lower-cased label
 * name, file) for every label name in a file's appdata (core/appdata-labels.ts), written by the files
 * repository in the transaction of each appdata change and gone with the file row (foreign key, on
 * delete cascade). Search finds a label's files through the primary key, as `file_tags` does for tags,
 * instead of a LIKE over every row's appdata JSON.
 *
 * Backfilled here from the rows already there, with the same walk the repository uses (in JS: the
 * names are folded to lower case by one rule on both databases).
 */
export const fileLabels: MigrationStep = async (db) => {
  await db.schema
    .createTable('file_labels')
    .addColumn('project_id', 'bigint', (c) => c.notNull())
    .addColumn('label_lower', 'text', (c) => c.notNull())
    .addColumn('uuid', 'text', (c) => c.notNull().references('files.uuid').onDelete('cascade'))
    .addPrimaryKeyConstraint('file_labels_pk', ['project_id', 'label_lower', 'uuid'])
    .execute();
  // Replacing a file's labels and the cascade find its rows by uuid.
  await db.schema.createIndex('file_labels_uuid').on('file_labels').column('uuid').execute();
  await backfill(db);
};

const BATCH = 1000;

/** Keyset batches over files with any appdata, so memory stays flat in the number of files. */
async function backfill(db: Kysely<unknown>): Promise<void> {
  let after = '';
  for (;;) {
    const r = await sql<{ uuid: string; project_id: number | string; appdata: string }>`
      select uuid, project_id, appdata from files where uuid > ${after} and appdata <> '{}' order by uuid limit ${BATCH}`.execute(db);
    const rows = r.rows;
    if (rows.length === 0) return;
    const labels: Array<[number, string, string]> = [];
    for (const row of rows) {
      for (const key of appdataLabelKeys(parseOrNull(row.appdata))) labels.push([Number(row.project_id), key, row.uuid]);
    }
    for (let i = 0; i < labels.length; i += BATCH) {
      const values = labels.slice(i, i + BATCH).map(([p, l, u]) => sql`(${p}, ${l}, ${u})`);
      await sql`insert into file_labels (project_id, label_lower, uuid) values ${sql.join(values)}`.execute(db);
    }
    after = rows[rows.length - 1]!.uuid;
  }
}

function parseOrNull(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
