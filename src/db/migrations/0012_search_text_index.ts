import { sql, type Kysely } from 'kysely';
import type { MigrationStep } from './types.js';

/**
 * Indexed substring search (docs/files.md "Search"): the text conditions (`query`, `phrase`) find
 * their rows through a trigram index instead of scanning the project.
 *
 * SQLite: an FTS5 table with the trigram tokenizer over original_filename, detected_mime and
 * metadata, kept by triggers in the transaction of every change of a file row. Its rowids come from
 * `files_text_keys` (an INTEGER PRIMARY KEY per uuid), not from files' implicit rowid, which VACUUM
 * may renumber.
 *
 * PostgreSQL: pg_trgm GIN indexes on lower(column), which serve the `lower(col) LIKE '%…%'` the
 * repository writes. The extension is created when the role may (it is "trusted" since PostgreSQL
 * 13); without it the same queries still answer, by scanning.
 */
export const searchTextIndex: MigrationStep = async (db, dialect) => {
  if (dialect === 'postgres') return postgres(db);
  await sql`create table files_text_keys (id integer primary key, uuid text not null unique)`.execute(db);
  await sql`create virtual table files_text using fts5(original_filename, detected_mime, metadata, tokenize = 'trigram')`.execute(db);
  await sql`insert into files_text_keys (uuid) select uuid from files order by uploaded_us`.execute(db);
  await sql`insert into files_text (rowid, original_filename, detected_mime, metadata)
    select k.id, f.original_filename, coalesce(f.detected_mime, ''), f.metadata from files f join files_text_keys k on k.uuid = f.uuid`.execute(db);
  await sql`create trigger files_text_insert after insert on files begin
    insert into files_text_keys (uuid) values (new.uuid);
    insert into files_text (rowid, original_filename, detected_mime, metadata)
      values (last_insert_rowid(), new.original_filename, coalesce(new.detected_mime, ''), new.metadata);
  end`.execute(db);
  await sql`create trigger files_text_update after update of original_filename, detected_mime, metadata on files begin
    delete from files_text where rowid = (select id from files_text_keys where uuid = old.uuid);
    insert into files_text (rowid, original_filename, detected_mime, metadata)
      values ((select id from files_text_keys where uuid = new.uuid), new.original_filename, coalesce(new.detected_mime, ''), new.metadata);
  end`.execute(db);
  await sql`create trigger files_text_delete after delete on files begin
    delete from files_text where rowid = (select id from files_text_keys where uuid = old.uuid);
    delete from files_text_keys where uuid = old.uuid;
  end`.execute(db);
};

async function postgres(db: Kysely<unknown>): Promise<void> {
  // Into public when it can (an extension in our own schema would go with that schema, and take
  // every other schema's trigram indexes with it), else into our schema. A failed CREATE EXTENSION
  // (no privilege, not installed) must not abort the migration's transaction: savepoints.
  for (const create of [sql`create extension if not exists pg_trgm with schema public`, sql`create extension if not exists pg_trgm`]) {
    await sql`savepoint pg_trgm`.execute(db);
    try {
      await create.execute(db);
      await sql`release savepoint pg_trgm`.execute(db);
      break;
    } catch {
      await sql`rollback to savepoint pg_trgm`.execute(db);
    }
  }
  // The operator class lives in the extension's schema, which need not be on our search_path.
  const found = await sql<{ nspname: string }>`select n.nspname from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db);
  const schema = found.rows[0]?.nspname;
  if (!schema) return;
  const ops = sql`${sql.id(schema)}.gin_trgm_ops`;
  for (const column of ['original_filename', 'detected_mime', 'metadata']) {
    await sql`create index ${sql.id(`files_${column}_trgm`)} on files using gin (lower(${sql.ref(column)}) ${ops})`.execute(db);
  }
}
