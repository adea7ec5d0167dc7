/**
 * Runs once per `npm test`: builds the CLI the tests start, installs the optional remove_bg plugin
 * the add-on tests use (first run only, like the dependencies), and drops leftover PostgreSQL test
 * schemas.
 */
import { execSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';

export default async function setup(): Promise<void> {
  const root = path.resolve(__dirname, '..', '..');
  if (!process.env['STOWAGE_SKIP_BUILD']) execSync('node scripts/ensure-built.mjs', { cwd: root, stdio: 'inherit' });
  installTestPlugins(root);
  const url = process.env['STOWAGE_DATABASE_URL'];
  if (!url || !/^postgres/.test(url)) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // Search's trigram indexes (migration 0012) need pg_trgm; made here, in public, it belongs to no
    // test schema, so dropping one never takes the others' indexes with it.
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public');
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

/**
 * remove_bg's model is AGPL, so it is never a dependency: an operator installs it with
 * `stowage plugin install`. The tests need it for real, so a fresh clone gets it here, into the
 * checkout's .plugins/ (gitignored), the same way .ci/run and an operator would.
 */
function installTestPlugins(root: string): void {
  const plugins = path.join(root, '.plugins');
  if (fs.existsSync(path.join(plugins, 'node_modules', '@imgly', 'background-removal-node'))) return;
  console.error('stowage tests: installing the optional remove_bg plugin into .plugins/ (first run)…');
  execSync(`node bin/stowage.js plugin install remove_bg --plugins-dir "${plugins}"`, { cwd: root, stdio: 'inherit' });
}
