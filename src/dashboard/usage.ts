/** What the files page's usage strip shows (GET /dashboard/api/usage). */

/** A project's files: live ones stored and not (counts and bytes), and how many were removed. */
export interface Usage {
  stored: { files: number; bytes: number };
  unstored: { files: number; bytes: number };
  removed: { files: number };
}

/** Where the route reads it from (the dashboard's UsageRepo). */
export interface UsageSource {
  forProject(projectId: number): Promise<Usage>;
}
