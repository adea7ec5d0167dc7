/** `stowage doctor`: checks the pieces a node uses and says what each missing one disables. */
import type { Command } from 'commander';
import { loadConfig, type Config } from '../config.js';
import type { DoctorCheck } from '../doctor/check.js';
import { exitCode, renderReport, runChecks } from '../doctor/run.js';

export interface DoctorCliHelpers {
  storeOptions(cmd: Command): Command;
  flagsOf(opts: Record<string, unknown>): Partial<Record<keyof Config, unknown>>;
  /** Loaded when the command runs: the checks import most of the app. */
  checks(): Promise<DoctorCheck[]>;
}

export function registerDoctorCommand(program: Command, h: DoctorCliHelpers): void {
  h.storeOptions(program.command('doctor').description('check the database, blob store, Redis, programs and fonts; say what each missing piece disables'))
    .option('--json', 'print JSON', false)
    .action(async (opts: Record<string, unknown>) => {
      const config = loadConfig({ ...h.flagsOf(opts), logLevel: 'warn' });
      const reports = await runChecks(await h.checks(), config);
      process.stdout.write(opts['json'] ? JSON.stringify(reports) + '\n' : renderReport(reports));
      process.exitCode = exitCode(reports);
    });
}
