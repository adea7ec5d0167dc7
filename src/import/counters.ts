/** What an import has done so far: run.ts counts, progress.ts shows. */

export interface Tally {
  /** Known from the source's list totals (null until the first page arrives). */
  total: number | null;
  imported: number;
  /** Already here from an earlier run (or identical): left alone. */
  present: number;
  failed: number;
}

export interface Failure {
  kind: 'file' | 'group';
  id: string;
  reason: string;
}

export interface ImportCounters {
  files: Tally;
  groups: Tally;
  /** File bytes received so far. */
  bytes: number;
  retries: number;
  failures: Failure[];
  startedMs: number;
}

export function newCounters(): ImportCounters {
  const tally = (): Tally => ({ total: null, imported: 0, present: 0, failed: 0 });
  return { files: tally(), groups: tally(), bytes: 0, retries: 0, failures: [], startedMs: Date.now() };
}

export const settled = (t: Tally): number => t.imported + t.present + t.failed;
