/**
 * Which size of the reliability suite runs, from STOWAGE_RELIABILITY:
 *   (unset) / bounded  the CI run: every part, small counts, a few minutes in all
 *   full               the fuzzers at full size (>= 1 M CDN URLs) and more SIGKILL rounds
 *   soak               only the 10-minute soak (mixed load, memory and fd samples)
 * STOWAGE_RELIABILITY_URLS overrides the CDN URL count (any mode), for a run of a chosen length.
 */
export type Mode = 'bounded' | 'full' | 'soak';

function readMode(): Mode {
  const raw = (process.env['STOWAGE_RELIABILITY'] ?? '').trim().toLowerCase();
  if (raw === '' || raw === 'bounded') return 'bounded';
  if (raw === 'full' || raw === 'soak') return raw;
  throw new Error(`STOWAGE_RELIABILITY must be bounded, full or soak, got "${raw}"`);
}

export const MODE: Mode = readMode();

/** The value for the current mode: `bounded` in CI, `full` in the full run. */
export function sized<T>(bounded: T, full: T): T {
  return MODE === 'full' ? full : bounded;
}

/** True when only the soak runs: the other files skip themselves. */
export const SOAK_ONLY = MODE === 'soak';

export function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return n;
}

/** A reliability figure printed to the run's output (the docs quote the last full run). */
export function report(part: string, figures: Record<string, unknown>): void {
  console.log(`[reliability] ${part} ${JSON.stringify(figures)}`);
}

/**
 * Cases whose fix has not landed yet are listed in a PENDING set at the top of their file and
 * skipped, so the bounded run stays green. STOWAGE_RELIABILITY_UNGATE=all (or a comma list of case
 * names) runs them anyway: the acceptance check for whoever lands the fix.
 */
export function pendingGate(pending: ReadonlySet<string>): (name: string) => boolean {
  const raw = (process.env['STOWAGE_RELIABILITY_UNGATE'] ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const ungated = new Set(raw);
  return (name: string) => pending.has(name) && !ungated.has('all') && !ungated.has(name);
}
