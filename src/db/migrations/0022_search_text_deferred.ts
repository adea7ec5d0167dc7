import { sql } from 'kysely';
import type { MigrationStep } from './types.js';

/**
 * SQLite: a new file's text joins the FTS5 trigram index (migration 0012) in a later, shared
 * transaction instead of its own upload's (files/text/repo.ts). FTS5 writes about eight pages
 * per transaction whatever it indexes (a new segment, the structure and averages records, its
 * content and size rows, merges), a quarter of a lone upload's WAL pages; a batch of many new
 * files writes them once.
 *
 * The insert trigger now only numbers the file (`files_text_keys`) and lists that number in
 * `files_text_pending`; the indexer moves pending files into `files_text` and empties the list in
 * one transaction, and every search runs it first, so a search still sees every committed file.
 * A pending file's later changes need no index write (the indexer reads the row as it is then);
 * a pending file's deletion drops it from the list.
 *
 * PostgreSQL: nothing (its trigram indexes are ordinary indexes on `files`).
 */
export const searchTextDeferred: MigrationStep = async (db, dialect) => {
  if (dialect === 'postgres') return;
  await sql`create table files_text_pending (id integer primary key)`.execute(db);
  await sql`drop trigger files_text_insert`.execute(db);
  await sql`drop trigger files_text_update`.execute(db);
  await sql`drop trigger files_text_delete`.execute(db);
  await sql`create trigger files_text_insert after insert on files begin
    insert into files_text_keys (uuid) values (new.uuid);
    insert into files_text_pending (id) values (last_insert_rowid());
  end`.execute(db);
  await sql`create trigger files_text_update after update of original_filename, detected_mime, metadata on files
    when not exists (select 1 from files_text_pending where id = (select id from files_text_keys where uuid = new.uuid))
  begin
    delete from files_text where rowid = (select id from files_text_keys where uuid = old.uuid);
    insert into files_text (rowid, original_filename, detected_mime, metadata)
      values ((select id from files_text_keys where uuid = new.uuid), new.original_filename, coalesce(new.detected_mime, ''), new.metadata);
  end`.execute(db);
  await sql`create trigger files_text_delete after delete on files begin
    delete from files_text_pending where id = (select id from files_text_keys where uuid = old.uuid);
    delete from files_text where rowid = (select id from files_text_keys where uuid = old.uuid);
    delete from files_text_keys where uuid = old.uuid;
  end`.execute(db);
};
