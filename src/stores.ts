/**
 * The metadata store and the logger, without the HTTP surfaces or any feature: what the admin
 * commands need. `stowage project create` runs once per test server and per operator command, and
 * loading the whole app (sharp, models, the AWS SDK) cost it over a second of CPU.
 */
import pino, { type Logger } from 'pino';
import type { Config } from './config.js';
import { dbOptionsFrom, openDb } from './db/connect.js';
import { migrate } from './db/migrations.js';
import { ProjectRepo } from './projects/repo.js';
import { ProjectService } from './projects/service.js';

/** Opens the stores and runs migrations: what both `serve` and the admin commands need. */
export async function openStores(config: Config, log: Logger) {
  const db = await openDb(dbOptionsFrom(config));
  const { newerThanThisRelease } = await migrate(db);
  const projects = new ProjectService(new ProjectRepo(db));
  log.debug({ dialect: db.dialect }, 'metadata store ready');
  return { db, projects, newerThanThisRelease };
}

export function createLogger(config: Config): Logger {
  // Secrets never reach logs: Authorization headers and key fields are redacted wherever they appear.
  return pino({ level: config.logLevel, redact: ['*.authorization', '*.headers.authorization', '*.secret', '*.secretKey', '*.secret_key', '*.s3SecretAccessKey'] });
}
