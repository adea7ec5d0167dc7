/** Tables of the conversions feature (merged into Database in ../schema.ts). */
import type { Generated } from 'kysely';

export interface ConversionJobsTable {
  /** The wire's integer `token`. */
  id: Generated<number>;
  project_id: number;
  kind: 'document' | 'video';
  source_uuid: string;
  /** The path as the client sent it (`original_source`). */
  path: string;
  /** JSON text: the parsed target (conversions/paths.ts). */
  target: string;
  store: 'auto' | '1' | '0';
  /** 0/1 */
  save_in_group: number;
  result_uuid: string;
  group_uuid: string | null;
  group_count: number | null;
  status: 'pending' | 'processing' | 'finished' | 'failed';
  error: string | null;
  created_us: number;
  updated_us: number;
}

export interface ConversionsTables {
  conversion_jobs: ConversionJobsTable;
}
