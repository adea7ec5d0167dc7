import type { ColumnType } from 'kysely';
/** Tables of the uploads feature (merged into Database in ../schema.ts). */

export interface MultipartUploadsTable {
  uuid: string;
  project_id: number;
  filename: string;
  content_type: string;
  size: number;
  part_size: number;
  parts: number;
  store: 'auto' | '1' | '0';
  /** JSON text: Record<string, string>. */
  metadata: string;
  /** JSON text: string[]. */
  tags: ColumnType<string, string | undefined, string>;
  state: 'open' | 'completing' | 'done';
  claimed_us: number | null;
  created_us: number;
  expires_us: number;
}

export interface FromUrlTasksTable {
  token: string;
  project_id: number;
  source_url: string;
  /** JSON text: FromUrlOptions (src/uploads/from-url/tasks.ts). */
  options: string;
  status: 'waiting' | 'progress' | 'success' | 'error';
  done: number;
  /** null while the size is unknown. */
  total: number | null;
  file_uuid: string | null;
  error: string | null;
  error_code: string | null;
  created_us: number;
  updated_us: number;
}

export interface ServerSecretsTable {
  name: string;
  value: string;
  created_us: number;
}

export interface UploadsTables {
  multipart_uploads: MultipartUploadsTable;
  from_url_tasks: FromUrlTasksTable;
  server_secrets: ServerSecretsTable;
}
