/** Tables of the groups feature (merged into Database in ../schema.ts). */
import type { Generated } from 'kysely';

export interface FileGroupsTable {
  uuid: string;
  project_id: number;
  files_count: number;
  created_us: number;
}

export interface FileGroupMembersTable {
  group_uuid: string;
  position: number;
  file_uuid: string;
  /** Operations without the leading `-/`, trailing `/` kept; '' when none. */
  effects: string;
}

export interface CustomStoragesTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  /** S3 endpoint URL; null means the AWS default for the region. */
  endpoint: string | null;
  region: string;
  bucket: string;
  access_key_id: string;
  secret_access_key: string;
  force_path_style: number;
  /** Default key pattern (`${default}` unless set). */
  pattern: string;
  created_us: number;
}

export interface GroupsTables {
  file_groups: FileGroupsTable;
  file_group_members: FileGroupMembersTable;
  custom_storages: CustomStoragesTable;
}
