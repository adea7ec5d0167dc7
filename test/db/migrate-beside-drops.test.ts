/**
 * PostgreSQL databases shared by several tenants (a schema each): a node migrating its schema while
 * another tenant's schema is dropped must still start. Kysely's migrator lists the tables of every
 * schema, and a schema dropped between its catalog scan and the privilege check made the whole
 * migration fail with `schema "…" does not exist` (seen when another test run dropped its schemas).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openDb } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrations.js';
import { newSchema, usingPostgres } from '../helpers/server.js';

describe.skipIf(!usingPostgres())('migrations beside schemas being dropped', () => {
  it('every node migrates while other schemas are created and dropped all the time', async () => {
    const url = process.env['STOWAGE_DATABASE_URL'] as string;
    const churn = new pg.Client({ connectionString: url });
    await churn.connect();
    let stop = false;
    const other = `churn_${process.pid}`;
    // Another tenant's schemas, each with a few tables, coming and going as fast as they can.
    const churning = (async () => {
      for (let i = 0; !stop; i++) {
        const name = `${other}_${i % 4}`;
        await churn.query(`CREATE SCHEMA IF NOT EXISTS ${name}`);
        for (let t = 0; t < 6; t++) await churn.query(`CREATE TABLE IF NOT EXISTS ${name}.t${t} (id serial primary key, v text)`);
        await churn.query(`DROP SCHEMA ${name} CASCADE`);
      }
    })();
    const failures: string[] = [];
    try {
      for (let round = 0; round < 8; round++) {
        const results = await Promise.allSettled(
          Array.from({ length: 3 }, async () => {
            const schema = newSchema() as string;
            const db = await openDb({ databaseUrl: url, dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-mig-')), schema });
            try {
              await migrate(db);
            } finally {
              await db.close();
              const admin = new pg.Client({ connectionString: url });
              await admin.connect();
              await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).finally(() => admin.end());
            }
          }),
        );
        for (const r of results) if (r.status === 'rejected') failures.push(String(r.reason));
      }
    } finally {
      stop = true;
      await churning;
      for (let i = 0; i < 4; i++) await churn.query(`DROP SCHEMA IF EXISTS ${other}_${i} CASCADE`);
      await churn.end();
    }
    expect(failures).toEqual([]);
  }, 240_000);
});
