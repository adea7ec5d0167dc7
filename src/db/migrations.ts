import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { Db } from './connect.js';
import { MIGRATIONS } from './migrations/index.js';

/** Brings the schema to the latest version; safe to run from several processes at once (Kysely locks). */
export async function migrate(db: Db): Promise<void> {
  const provider: MigrationProvider = {
    async getMigrations() {
      const out: Record<string, Migration> = {};
      for (const [name, step] of MIGRATIONS) out[name] = { up: (k) => step(k, db.dialect) };
      return out;
    },
  };
  const { error, results } = await new Migrator({
    db: db.kysely,
    provider,
    // Kysely looks for its own tables across all schemas unless told which one is ours.
    ...(db.schema ? { migrationTableSchema: db.schema } : {}),
  }).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
