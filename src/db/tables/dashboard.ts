/** Tables of the dashboard feature (merged into Database in ../schema.ts). */

export interface DashboardSessionsTable {
  /** SHA-256 (hex) of the cookie's token. */
  token_hash: string;
  project_id: number;
  pub_key: string;
  secret_hash: string | null;
  created_us: number;
  expires_us: number;
}

export interface DashboardTables {
  dashboard_sessions: DashboardSessionsTable;
}
