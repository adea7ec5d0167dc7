/** Tables of the tus feature (merged into Database in ../schema.ts). */

export interface TusUploadsTable {
  id: string;
  project_id: number;
  file_uuid: string;
  length: number;
  /** The durable offset: bytes fsynced in the staging file. */
  received: number;
  upload_metadata: string;
  filename: string | null;
  content_type: string;
  store: 'auto' | '1' | '0';
  /** JSON text: Record<string, string>. */
  metadata: string;
  /** JSON text: string[]. */
  tags: string;
  state: 'open' | 'done';
  created_us: number;
  expires_us: number;
  /** The client address group that created it (tus/client.ts): IPv4 address or IPv6 /64. */
  client: string;
}

export interface TusTables {
  tus_uploads: TusUploadsTable;
}
