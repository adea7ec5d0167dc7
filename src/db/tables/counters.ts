/** Per-project counters of the list answers (migration 0018, ../project-counters.ts; merged into Database in ../schema.ts). */

export interface ProjectCountersTable {
  project_id: number;
  /** Files with `removed_us` set (whatever `stored_us` holds: an imported removed file may keep it). */
  removed_files: number;
  /** Live files with `stored_us` set. */
  stored_files: number;
  /** Live files without `stored_us`. */
  unstored_files: number;
  groups_count: number;
}

export interface CountersTables {
  project_counters: ProjectCountersTable;
}
