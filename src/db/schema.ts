/**
 * Table types of the metadata store. Times are integer microseconds since the epoch (`*_us`) so
 * both dialects order and compare them exactly; booleans are 0/1 integers for the same reason.
 * JSON columns hold text and are parsed at the edge of the query modules.
 */
import type { ColumnType, Generated } from 'kysely';
import type { ConversionsTables } from './tables/conversions.js';
import type { GroupsTables } from './tables/groups.js';
import type { UploadsTables } from './tables/uploads.js';
import type { WebhooksTables } from './tables/webhooks.js';
import type { AddonsTables } from './tables/addons.js';
import type { TusTables } from './tables/tus.js';
import type { DashboardTables } from './tables/dashboard.js';
import type { CountersTables } from './tables/counters.js';
import type { S3Tables } from './tables/s3.js';

export interface ProjectsTable {
  id: Generated<number>;
  name: string;
  pub_key: string;
  autostore: number;
  signed_uploads: number;
  created_us: number;
  signed_cdn: ColumnType<number, number | undefined, number>;
  /** Hex key of signed CDN tokens; null until first needed. */
  cdn_secret: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface SecretKeysTable {
  id: Generated<number>;
  project_id: number;
  secret: string;
  created_us: number;
  revoked_us: number | null;
}

export interface FilesTable {
  uuid: string;
  project_id: number;
  uploaded_us: number;
  stored_us: number | null;
  removed_us: number | null;
  size: number;
  mime_type: string;
  original_filename: string;
  filename: string;
  is_image: number;
  is_ready: number;
  /** JSON text of content_info, null while unknown. */
  content_info: string | null;
  metadata: string;
  appdata: string;
  /** Key in the blob store; null once the bytes were reclaimed. */
  blob_key: string | null;
  md5: string;
  source_url: string | null;
  /** JSON text: string[] (core/tags.ts); mirrored in file_tags for lookups. */
  tags: ColumnType<string, string | undefined, string>;
  /** content_info.mime.mime as a column, for search (null only in rows of the migration's own past). */
  detected_mime: ColumnType<string | null, string | null | undefined, string | null>;
  /** The S3 key PutObject wrote it under (migration 0026); null for files uploaded any other way. */
  object_key: ColumnType<string | null, string | null | undefined, string | null>;
  /** The S3 ETag of an object assembled from parts; null when it is the MD5. */
  object_etag: ColumnType<string | null, string | null | undefined, string | null>;
  /** A file removed through the API can be stored again until then (files/lifecycle.ts); null otherwise. */
  restore_until_us: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface FileTagsTable {
  project_id: number;
  tag: string;
  uuid: string;
}

/** Label names of a file's appdata, lower-cased (migration 0017, core/appdata-labels.ts): search's `appdata_labels`. */
export interface FileLabelsTable {
  project_id: number;
  label_lower: string;
  uuid: string;
}

/** Which blob holds a project's bytes with this SHA-256 (migration 0013, docs/storage.md). */
export interface FileContentsTable {
  project_id: number;
  sha256: string;
  blob_key: string;
  size: number;
  created_us: number;
}

export interface JobsTable {
  id: Generated<number>;
  kind: string;
  payload: string;
  state: ColumnType<'pending' | 'done' | 'dead', string | undefined, string>;
  run_at_us: number;
  attempts: ColumnType<number, number | undefined, number>;
  max_attempts: number;
  lease_until_us: number | null;
  locked_by: string | null;
  last_error: string | null;
  /** Deduplication key: at most one job per key is ever enqueued (e.g. one expiry sweep per period). */
  unique_key: string | null;
  /** Jobs sharing it share a per-key concurrency limit (e.g. a project's webhook deliveries). */
  fair_key: ColumnType<string | null, string | null | undefined, string | null>;
  created_us: number;
}

export interface TokenUsageTable {
  token_id: string;
  used: number;
  expires_us: number;
}

export interface Database extends GroupsTables, WebhooksTables, UploadsTables, AddonsTables, ConversionsTables, TusTables, DashboardTables, CountersTables, S3Tables {
  token_usage: TokenUsageTable;
  file_tags: FileTagsTable;
  file_labels: FileLabelsTable;
  file_contents: FileContentsTable;
  projects: ProjectsTable;
  secret_keys: SecretKeysTable;
  files: FilesTable;
  jobs: JobsTable;
}
