/**
 * Upgrades: a node of this release started on a store a newer release has migrated (rolling
 * upgrades, a restart or an added old node before every node runs the new release) starts and
 * serves, because migrations only add. It used to stop at start with Kysely's "corrupted
 * migrations: previously executed migration … is missing".
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openDb } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrations.js';
import { restClient, uploadBase } from '../helpers/rest.js';
import { newSchema, startServer, type TestServer } from '../helpers/server.js';

const NEWER = '9999_from_a_newer_release';

describe('a store migrated by a newer release', () => {
  let server: TestServer | undefined;
  afterAll(async () => server?.stop());

  it('a node of this release starts on it and serves uploads and reads', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-newer-'));
    const schema = newSchema();
    const db = await openDb({ databaseUrl: process.env['STOWAGE_DATABASE_URL'] ?? '', dataDir, ...(schema ? { schema } : {}) });
    try {
      await migrate(db);
      // What `stowage migrate` of the next release leaves: one more row in Kysely's table.
      await sql`insert into kysely_migration (name, timestamp) values (${NEWER}, ${new Date().toISOString()})`.execute(db.kysely);
      expect(await migrate(db)).toEqual({ newerThanThisRelease: [NEWER] });
    } finally {
      await db.close();
    }
    server = await startServer({ dataDir, ...(schema ? { schema } : {}) });
    expect(server.output()).toContain(NEWER);
    const keys = await server.createProject();
    const up = await uploadBase(server.upload, keys.public_key, [{ name: 'a.txt', data: 'served on a newer schema' }], { UPLOADCARE_STORE: '1' });
    expect(up.status).toBe(200);
    const uuid = (up.json as { file: string }).file;
    const info = await restClient(server.rest, keys)('GET', `/files/${uuid}/`);
    expect(info.status).toBe(200);
    expect((await fetch(`${server.cdn}/${uuid}/`).then((r) => r.text()))).toBe('served on a newer schema');
  });
});
