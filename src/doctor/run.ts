/** Runs the doctor's checks side by side, each bounded in time, and renders the report. */
import type { Config } from '../config.js';
import type { CheckReport, DoctorCheck } from './check.js';

export const CHECK_TIMEOUT_MS = 20_000;

export async function runChecks(checks: DoctorCheck[], config: Config, timeoutMs = CHECK_TIMEOUT_MS): Promise<CheckReport[]> {
  return Promise.all(checks.map((check) => runOne(check, config, timeoutMs)));
}

async function runOne(check: DoctorCheck, config: Config, timeoutMs: number): Promise<CheckReport> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
  });
  try {
    const found = await Promise.race([check.run(config), timeout]);
    if (found === null) return { name: check.name, status: 'off', detail: 'not configured', disables: check.disables };
    return { name: check.name, status: 'ok', detail: found, disables: null };
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    return { name: check.name, status: check.required ? 'failed' : 'missing', detail, disables: check.disables };
  } finally {
    clearTimeout(timer);
  }
}

/** One line per check; a second, indented line says what a missing piece disables. */
export function renderReport(reports: CheckReport[]): string {
  const width = Math.max(...reports.map((r) => r.name.length));
  const lines: string[] = [];
  for (const r of reports) {
    lines.push(`${r.status.padEnd(8)}${r.name.padEnd(width + 2)}${r.detail.split('\n')[0]}`);
    if (r.disables) lines.push(`${' '.repeat(8 + width + 2)}-> ${r.status === 'off' ? 'without it' : 'disables'}: ${r.disables}`);
  }
  return lines.join('\n') + '\n';
}

/** Exit status: 1 when a required piece failed. */
export function exitCode(reports: CheckReport[]): number {
  return reports.some((r) => r.status === 'failed') ? 1 : 0;
}
