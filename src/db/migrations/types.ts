import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Dialect } from '../connect.js';

export type MigrationStep = (db: Kysely<unknown>, dialect: Dialect) => Promise<void>;

/** Auto-increment primary key spelled per dialect. */
export function idType(dialect: Dialect): RawBuilder<unknown> {
  return dialect === 'postgres' ? sql`bigserial primary key` : sql`integer primary key autoincrement`;
}
