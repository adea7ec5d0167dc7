/** How a node's PostgreSQL connections are opened; apart from connect.ts so the job listener needs no more. */
import type { ClientConfig } from 'pg';

/**
 * How each of a node's PostgreSQL connections is opened: on its schema's search_path, and named
 * (application_name `stowage/<schema>`) so pg_stat_activity tells whose connections these are.
 */
export function connectionSettings(url: string, schema: string | undefined): ClientConfig {
  return {
    connectionString: url,
    application_name: `stowage/${schema ?? 'public'}`,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  };
}
