/** Runs once per `npm test`: builds the CLI the tests start, and drops leftover PostgreSQL test schemas. */
import { execSync } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';

export default async function setup(): Promise<void> {
  const root = path.resolve(__dirname, '..', '..');
  if (!process.env['STOWAGE_SKIP_BUILD']) execSync('node scripts/ensure-built.mjs', { cwd: root, stdio: 'inherit' });
  const url = process.env['STOWAGE_DATABASE_URL'];
  if (!url || !/^postgres/.test(url)) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ nspname: string }>("SELECT nspname FROM pg_namespace WHERE nspname LIKE 't\\_%'");
    // Only schemas older than an hour: another run may be using the young ones right now.
    const cutoff = Math.floor(Date.now() / 1000) - 3600;
    for (const { nspname } of rows) {
      const created = Number(/^t_(\d+)_/.exec(nspname)?.[1] ?? 0);
      if (created < cutoff) await client.query(`DROP SCHEMA IF EXISTS "${nspname}" CASCADE`);
    }
  } finally {
    await client.end();
  }
}
