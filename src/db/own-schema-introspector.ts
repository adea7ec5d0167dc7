/**
 * PostgreSQL introspection limited to this node's own schema (the search_path's first). Kysely's
 * migrator asks for the tables of every schema to find its own two; the default introspector's
 * query checks each schema's privileges by name, so a schema another tenant drops meanwhile made
 * the whole migration fail with `schema "…" does not exist`, and a node sharing the database could
 * not start (test/db/migrate-beside-drops.test.ts). Only the migrator introspects; it needs the
 * tables' names and schema, not their columns.
 */
import { sql, type DatabaseIntrospector, type DatabaseMetadata, type DatabaseMetadataOptions, type Kysely, type SchemaMetadata, type TableMetadata } from 'kysely';

export class OwnSchemaIntrospector implements DatabaseIntrospector {
  constructor(
    private readonly db: Kysely<unknown>,
    private readonly general: DatabaseIntrospector,
  ) {}

  getSchemas(): Promise<SchemaMetadata[]> {
    return this.general.getSchemas();
  }

  async getTables(_options?: DatabaseMetadataOptions): Promise<TableMetadata[]> {
    const { rows } = await sql<{ name: string; schema: string; is_view: boolean }>`
      SELECT c.relname AS name, n.nspname AS schema, c.relkind = 'v' AS is_view
      FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'v', 'p')
      ORDER BY c.relname`.execute(this.db);
    return rows.map((r) => ({ name: r.name, schema: r.schema, isView: r.is_view, columns: [] }));
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}
