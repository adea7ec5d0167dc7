/** Tables of the add-ons feature (merged into Database in ../schema.ts). */

export type AddonStatus = 'in_progress' | 'done' | 'error';

export interface AddonExecutionsTable {
  request_id: string;
  project_id: number;
  addon: string;
  /** uuid of the file the add-on runs on. */
  target: string;
  /** JSON text: the add-on's parsed params. */
  params: string;
  status: AddonStatus;
  /** `<addon>:<target>` while in progress, null after (unique: one run per file and add-on at a time). */
  running_key: string | null;
  /** uuid of the file the add-on makes (remove_bg), fixed at execute time. */
  result_file: string | null;
  error: string | null;
  created_us: number;
  updated_us: number;
}

export interface AddonProjectSettingsTable {
  project_id: number;
  /** JSON text: string[] of add-on names. */
  on_upload: string;
  updated_us: number;
}

export interface AddonsTables {
  addon_executions: AddonExecutionsTable;
  addon_project_settings: AddonProjectSettingsTable;
}
