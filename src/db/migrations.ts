import { Migrator, sql, type Migration, type MigrationProvider } from 'kysely';
import type { Db } from './connect.js';
import { MIGRATIONS } from './migrations/index.js';

export interface MigrateResult {
  /** Migrations a newer release ran on this store that this release does not know (then none ran here). */
  newerThanThisRelease: string[];
}

/**
 * Brings the schema to the latest version; safe to run from several processes at once (Kysely locks).
 * A store a newer release has migrated is left as it is: migrations only add (docs/scale-out.md,
 * upgrades), so a node of the previous release still serves on it during a rolling upgrade, and
 * may restart there. It still needs every migration of its own.
 */
export async function migrate(db: Db): Promise<MigrateResult> {
  const provider: MigrationProvider = {
    async getMigrations() {
      const out: Record<string, Migration> = {};
      for (const [name, step] of MIGRATIONS) out[name] = { up: (k) => step(k, db.dialect) };
      return out;
    },
  };
  const migrator = new Migrator({
    db: db.kysely,
    provider,
    // Kysely looks for its own tables across all schemas unless told which one is ours.
    ...(db.schema ? { migrationTableSchema: db.schema } : {}),
  });
  const newer = await unknownApplied(db);
  if (newer.length > 0) {
    const missing = (await migrator.getMigrations()).filter((m) => !m.executedAt).map((m) => m.name);
    if (missing.length > 0) throw new Error(`the schema was migrated by another release without ${missing.join(', ')}: run \`stowage migrate\` of the newest release`);
    return { newerThanThisRelease: newer };
  }
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return { newerThanThisRelease: [] };
}

/** Migrations recorded in the store that this release does not have (none on a fresh store). */
async function unknownApplied(db: Db): Promise<string[]> {
  const known = new Set(MIGRATIONS.map(([name]) => name));
  // The connection's search_path is the node's schema on PostgreSQL.
  const ran = await sql<{ name: string }>`select name from kysely_migration`.execute(db.kysely).then(
    (r) => r.rows.map((row) => row.name),
    // A store never migrated has no such table yet.
    () => [] as string[],
  );
  return ran.filter((name) => !known.has(name));
}
