/**
 * Reads a test server's metadata store from outside the server: its SQLite file (read-only, beside
 * the running server, as another process would) or its PostgreSQL schema. For tests whose subject
 * is what was written, not only what the API answers.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { joinAsWriter, lockKeyOf } from '../../src/db/pg-alone.js';
import { usingPostgres, type TestServer } from './server.js';

/** Rows of one SELECT; `?` placeholders on both stores. */
export async function storeRows<T = Record<string, unknown>>(server: Pick<TestServer, 'dataDir' | 'schema'>, query: string, params: unknown[] = []): Promise<T[]> {
  if (!usingPostgres()) {
    const file = new Database(path.join(server.dataDir, 'stowage.sqlite'), { readonly: true, fileMustExist: true });
    try {
      return file.prepare(query).all(...params) as T[];
    } finally {
      file.close();
    }
  }
  return (await onPostgres(server, query, params)).rows as T[];
}

/**
 * Runs one write on the store from outside the server, as another process would (a second node,
 * an admin command): for tests of what the server sees of changes it did not make itself.
 */
export async function storeWrite(server: Pick<TestServer, 'dataDir' | 'schema'>, statement: string, params: unknown[] = []): Promise<number> {
  if (!usingPostgres()) {
    const file = new Database(path.join(server.dataDir, 'stowage.sqlite'), { fileMustExist: true });
    try {
      file.pragma('busy_timeout = 10000');
      return file.prepare(statement).run(...params).changes;
    } finally {
      file.close();
    }
  }
  return (await onPostgres(server, statement, params, true)).rowCount ?? 0;
}

/** One statement on the server's PostgreSQL schema through a connection of its own; `?` placeholders. */
async function onPostgres(server: Pick<TestServer, 'schema'>, statement: string, params: unknown[], write = false): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: process.env['STOWAGE_DATABASE_URL'], options: `-c search_path=${server.schema}` });
  await client.connect();
  try {
    // A writer joins as Stowage's own connections do, so a node caching rows alone stops first (db/pg-alone.ts).
    if (write) await joinAsWriter((text, values) => client.query(text, [...values]), lockKeyOf(server.schema), () => null);
    let n = 0;
    return await client.query(statement.replace(/\?/g, () => `$${++n}`), params);
  } finally {
    await client.end();
  }
}
