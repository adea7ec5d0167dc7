/**
 * `stowage import`: copy a whole project from the hosted service or another Stowage into a local
 * project, keeping uuids (docs/import.md). Writes through the file and group services into the
 * configured metadata store and blob store; the servers need not be running.
 */
import { Option, type Command } from 'commander';
import { loadConfig, type Config } from '../config.js';
import { DEFAULT_RETRY } from '../import/retry.js';

export interface ImportCliHelpers {
  storeOptions(cmd: Command): Command;
  flagsOf(opts: Record<string, unknown>): Partial<Record<keyof Config, unknown>>;
}

const HOSTED_REST = 'https://api.uploadcare.com';
/** A secret has no place on a command line (shell history, `ps`): the environment may carry it instead. */
export const IMPORT_SECRET_KEY_ENV = 'STOWAGE_IMPORT_SECRET_KEY';

function intOption(value: unknown, name: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be a whole number from ${min} to ${max}`);
  return n;
}

export function registerImportCommand(program: Command, h: ImportCliHelpers): void {
  h.storeOptions(program.command('import').description('copy a project from the hosted service or another Stowage, keeping uuids (docs/import.md)'))
    .requiredOption('--project <pub-key>', 'public key of the local project to import into')
    .requiredOption('--pub-key <key>', "the source project's public key")
    .addOption(new Option('--secret-key <key>', "the source project's secret key").env(IMPORT_SECRET_KEY_ENV))
    .option('--from-rest <url>', 'REST API base URL of the source', HOSTED_REST)
    .option('--from-cdn <url>', "CDN base URL to read files from (default: each file's original_file_url)")
    .option('--concurrency <n>', 'files copied at the same time', '4')
    .option('--retries <n>', 'tries per request on 429, 5xx and network errors', String(DEFAULT_RETRY.attempts))
    .option('--progress-interval <seconds>', 'how often a progress line is written when not on a terminal', '10')
    .action(async (opts: Record<string, unknown>) => {
      const secretKey = typeof opts['secretKey'] === 'string' ? opts['secretKey'] : '';
      if (!secretKey) throw new Error(`the source secret key is needed: --secret-key or ${IMPORT_SECRET_KEY_ENV}`);
      const concurrency = intOption(opts['concurrency'], '--concurrency', 1, 64);
      const retry = { ...DEFAULT_RETRY, attempts: intOption(opts['retries'], '--retries', 1, 100) };
      const intervalMs = intOption(opts['progressInterval'], '--progress-interval', 1, 3600) * 1000;

      const config = loadConfig({ ...h.flagsOf(opts), logLevel: 'warn' });
      // Loaded when the command runs: the file and group services pull in most of the app.
      const { importProject } = await import('../import/command.js');
      await importProject(config, {
        project: String(opts['project']),
        source: { restBase: String(opts['fromRest']), pubKey: String(opts['pubKey']), secretKey },
        cdnBase: typeof opts['fromCdn'] === 'string' ? opts['fromCdn'] : null,
        concurrency,
        retry,
        intervalMs,
      });
    });
}
