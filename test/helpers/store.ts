/**
 * A migrated metadata store of a suite's own, for tests whose subject sits below the HTTP server
 * (queues, repos, group commit): a SQLite file in a fresh temp directory, or a fresh PostgreSQL
 * schema when STOWAGE_DATABASE_URL is set, so the same suite runs on both stores.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDb, type Db } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrations.js';
import { newSchema } from './server.js';

export interface TestStore {
  /** The first connection, on a migrated store. */
  db: Db;
  /** The PostgreSQL schema (undefined on SQLite). */
  schema: string | undefined;
  /** Another connection to the same store: another node, as far as the code under test can tell. */
  connect(): Promise<Db>;
  /** Closes every connection opened here and removes the SQLite directory. */
  close(): Promise<void>;
}

/** `name` only labels the temp directory, to tell a leftover's suite. */
export async function migratedStore(name: string): Promise<TestStore> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `stowage-${name}-`));
  const schema = newSchema();
  const open: Db[] = [];
  const connect = async (): Promise<Db> => {
    const db = await openDb({ databaseUrl: process.env['STOWAGE_DATABASE_URL'] ?? '', dataDir, ...(schema ? { schema } : {}) });
    open.push(db);
    return db;
  };
  const db = await connect();
  await migrate(db);
  return {
    db,
    schema,
    connect,
    async close() {
      for (const d of open.splice(0)) await d.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
