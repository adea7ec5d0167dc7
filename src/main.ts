/**
 * CLI entry: `stowage serve`, `stowage migrate`, and project/key administration. Options come
 * from flags, then STOWAGE_* environment variables, then defaults (see config.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Command, Option } from 'commander';
import { baseUrls, ConfigError, loadConfig, type Config } from './config.js';
import { createLogger, openStores } from './stores.js';
import { sqliteFile } from './db/connect.js';
import { OPERATOR_BOOLEANS, parseBoolean } from './core/booleans.js';
import { isAppError } from './core/errors.js';
import { startLauncher } from './launcher/launch.js';
import { registerStorageCommands } from './cli/storage.js';
import { registerDoctorCommand } from './cli/doctor.js';
import { CDN_TOKEN_MAX_TTL_S } from './projects/service.js';
import { registerPluginCommands } from './cli/plugins.js';
import { registerImportCommand } from './cli/import.js';

type Flags = Partial<Record<keyof Config, unknown>>;

function storeOptions(cmd: Command): Command {
  return cmd
    .option('--data-dir <dir>', 'data directory (SQLite file and blobs) [STOWAGE_DATA_DIR]')
    .option('--database-url <url>', 'postgres://… to use PostgreSQL instead of SQLite [STOWAGE_DATABASE_URL]')
    .option('--database-schema <name>', 'PostgreSQL schema [STOWAGE_DATABASE_SCHEMA]');
}

function flagsOf(opts: Record<string, unknown>): Flags {
  const flags: Flags = {};
  const map: Record<string, keyof Config> = {
    dataDir: 'dataDir',
    databaseUrl: 'databaseUrl',
    databaseSchema: 'databaseSchema',
    restPort: 'restPort',
    uploadPort: 'uploadPort',
    cdnPort: 'cdnPort',
    s3ApiPort: 's3ApiPort',
    host: 'host',
    logLevel: 'logLevel',
    maxUploadBytes: 'maxUploadBytes',
  };
  for (const [opt, key] of Object.entries(map)) if (opts[opt] !== undefined) flags[key] = opts[opt];
  if (typeof opts['only'] === 'string') flags.only = opts['only'].split(',').map((s) => s.trim());
  return flags;
}

/**
 * Opens the metadata store for an admin command. Only `create` commands (project create, migrate)
 * may start a new SQLite store: any other command run where there is none (another folder than
 * the server's) says where it looked instead of creating an empty store and answering from it.
 */
async function withStores<T>(opts: Record<string, unknown>, fn: (stores: Awaited<ReturnType<typeof openStores>>) => Promise<T>, create = false): Promise<T> {
  const config = loadConfig({ ...flagsOf(opts), logLevel: 'warn' });
  if (!create && !config.databaseUrl && !fs.existsSync(sqliteFile(config.dataDir))) {
    throw new Error(
      `no Stowage data in ${config.dataDir} (no ${path.basename(sqliteFile(config.dataDir))} there). ` +
        'Run this in the folder `stowage serve` runs in, or name the store: --data-dir DIR (STOWAGE_DATA_DIR) or --database-url (STOWAGE_DATABASE_URL).',
    );
  }
  const stores = await openStores(config, createLogger(config));
  try {
    return await fn(stores);
  } finally {
    await stores.db.close();
  }
}

const onOff = (v: string): boolean => {
  const b = parseBoolean(v, OPERATOR_BOOLEANS);
  if (b !== undefined) return b;
  throw new Error(`expected on or off, got "${v}"`);
};

export function buildCli(): Command {
  const program = new Command('stowage')
    .description('Self-hosted file upload, storage, processing and delivery')
    .version(packageVersion(), '-V, --version', 'print the version')
    .showHelpAfterError();

  storeOptions(program.command('serve').description('start the REST, Upload and CDN servers'))
    .option('--rest-port <n>', 'REST API port [STOWAGE_REST_PORT]')
    .option('--upload-port <n>', 'Upload API port [STOWAGE_UPLOAD_PORT]')
    .option('--cdn-port <n>', 'CDN port [STOWAGE_CDN_PORT]')
    .option('--s3-api-port <n>', 'S3-compatible API port, served with --only …,s3 [STOWAGE_S3_API_PORT]')
    .option('--host <addr>', 'listen address [STOWAGE_HOST]')
    .option('--only <surfaces>', 'comma-separated subset of rest,upload,cdn,s3 [STOWAGE_ONLY]')
    .option('--log-level <level>', 'pino log level [STOWAGE_LOG_LEVEL]')
    .action(async (opts: Record<string, unknown>) => {
      // First, while this process is small: the helper that starts every tool child, so that the
      // server never forks itself once it has grown (src/launcher/launch.ts).
      startLauncher();
      const config = loadConfig(flagsOf(opts));
      // Loaded here, not at the top: the admin commands need none of the servers or features.
      const { startApp } = await import('./app.js');
      const app = await startApp(config);
      const demo = await ensureDemoProject(app.ctx.projects);
      const lines = [
        `Stowage is running (data: ${config.databaseUrl ? 'PostgreSQL' : config.dataDir}).`,
        `  REST API:   ${app.urls.rest}/`,
        `  Upload API: ${app.urls.upload}/`,
        `  CDN:        ${app.urls.cdn}/`,
        ...(app.urls.s3 ? [`  S3 API:     ${app.urls.s3}/`] : []),
      ];
      if (config.only.includes('rest')) lines.push(`  Dashboard:  ${app.urls.rest}/dashboard/`, `  API docs:   ${app.urls.rest}/docs/ (REST)${config.only.includes('upload') ? `, ${app.urls.upload}/docs/ (Upload)` : ''}`);
      if (app.metricsUrl) lines.push(`  Metrics:    ${app.metricsUrl}`);
      if (demo) lines.push(`Demo project "${demo.name}": public key ${demo.pubKey}, secret key ${demo.secret}`);
      process.stdout.write(lines.join('\n') + '\n');
      const stop = (signal: string) => {
        app.ctx.log.info({ signal }, 'shutting down');
        // Drain in-flight requests, but never hang: leases expire and clients retry.
        setTimeout(() => process.exit(1), config.shutdownGraceMs + 5_000).unref();
        app.close().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.once('SIGTERM', () => stop('SIGTERM'));
      process.once('SIGINT', () => stop('SIGINT'));
    });

  storeOptions(program.command('migrate').description('bring the metadata store schema up to date')).action(async (opts: Record<string, unknown>) => {
    await withStores(
      opts,
      async ({ newerThanThisRelease: newer }) =>
        process.stdout.write(newer.length > 0 ? `schema is newer than this release (${newer.join(', ')}): left as it is\n` : 'schema is up to date\n'),
      true,
    );
  });

  const project = program.command('project').description('manage projects');
  storeOptions(project.command('create').description('create a project and print its keys'))
    .requiredOption('--name <name>', 'project name')
    .option('--signed-uploads', 'require upload tokens or signatures', false)
    .addOption(new Option('--autostore <on|off>', 'store uploads by default (store=auto)').default('on'))
    .option('--json', 'print JSON', false)
    .action(async (opts: Record<string, unknown>) => {
      await withStores(opts, async ({ projects }) => {
        const { project: p, secretKey } = await projects.create({
          name: String(opts['name']),
          signedUploads: opts['signedUploads'] === true,
          autostore: onOff(String(opts['autostore'])),
        });
        const out = { id: p.id, name: p.name, public_key: p.pubKey, secret_key: secretKey, autostore: p.autostore, signed_uploads: p.signedUploads };
        process.stdout.write(opts['json'] ? JSON.stringify(out) + '\n' : `created project ${p.name}\n  public key: ${p.pubKey}\n  secret key: ${secretKey}\n`);
      }, true);
    });
  storeOptions(project.command('list').description('list projects'))
    .option('--json', 'print JSON', false)
    .action(async (opts: Record<string, unknown>) => {
      await withStores(opts, async ({ projects }) => {
        const rows = (await projects.list()).map((p) => ({ id: p.id, name: p.name, public_key: p.pubKey, autostore: p.autostore, signed_uploads: p.signedUploads }));
        process.stdout.write(opts['json'] ? JSON.stringify(rows) + '\n' : rows.map((r) => `${r.public_key}  ${r.name}${r.signed_uploads ? '  (signed uploads)' : ''}`).join('\n') + '\n');
      });
    });
  storeOptions(project.command('set').description('change project settings'))
    .requiredOption('--pub-key <key>', 'project public key')
    .option('--signed-uploads <on|off>', 'require upload tokens or signatures')
    .option('--autostore <on|off>', 'store uploads by default')
    .option('--addons-on-upload <names|none>', 'add-ons run on every upload, comma-separated (e.g. uc_clamav_virus_scan), or none')
    .option('--signed-cdn <on|off>', 'require a signed token on CDN URLs (docs/cdn-signed-urls.md)')
    .action(async (opts: Record<string, unknown>) => {
      await withStores(opts, async ({ db, projects }) => {
        const patch: { signedUploads?: boolean; autostore?: boolean; signedCdn?: boolean } = {};
        if (opts['signedUploads'] !== undefined) patch.signedUploads = onOff(String(opts['signedUploads']));
        if (opts['autostore'] !== undefined) patch.autostore = onOff(String(opts['autostore']));
        if (opts['signedCdn'] !== undefined) patch.signedCdn = onOff(String(opts['signedCdn']));
        const p = await projects.update(String(opts['pubKey']), patch);
        const { AddonSettings, parseAddonList } = await import('./addons/settings.js');
        const addons = new AddonSettings(db);
        if (opts['addonsOnUpload'] !== undefined) await addons.setOnUpload(p.id, parseAddonList(String(opts['addonsOnUpload'])));
        const onUpload = await addons.onUpload(p.id);
        process.stdout.write(
          `${p.pubKey}: autostore ${p.autostore ? 'on' : 'off'}, signed uploads ${p.signedUploads ? 'on' : 'off'}, add-ons on upload: ${onUpload.join(',') || 'none'}, signed CDN ${p.signedCdn ? 'on' : 'off'}\n`,
        );
      });
    });
  storeOptions(project.command('cdn-key').description('print the hex key signed CDN tokens are made with (for SDK token builders)'))
    .requiredOption('--pub-key <key>', 'project public key')
    .option('--rotate', 'replace the key: every token made with the old one stops working', false)
    .action(async (opts: Record<string, unknown>) => {
      await withStores(opts, async ({ projects }) => {
        process.stdout.write(`${await projects.cdnKey(String(opts['pubKey']), opts['rotate'] === true)}\n`);
      });
    });
  storeOptions(project.command('cdn-token').description('mint a signed CDN URL'))
    .requiredOption('--pub-key <key>', 'project public key')
    .requiredOption('--path <path>', 'CDN path (<uuid>/…, <group>~N/…) or CDN URL')
    .option('--expire-in <seconds>', 'lifetime in seconds', '300')
    .option('--wildcard', 'grant every URL under the path', false)
    .option('--exact-url', 'a token for this one URL (no acl)', false)
    .option('--cdn-base <url>', 'public CDN base URL [STOWAGE_CDN_BASE_URL]')
    .option('--json', 'print JSON', false)
    .action(async (opts: Record<string, unknown>) => {
      await withStores(opts, async ({ projects }) => {
        const ttlS = Number(opts['expireIn']);
        if (!Number.isInteger(ttlS) || ttlS < 1 || ttlS > CDN_TOKEN_MAX_TTL_S) throw new Error(`--expire-in must be 1 to ${CDN_TOKEN_MAX_TTL_S} seconds`);
        const project = await projects.require(String(opts['pubKey']));
        const base = cdnBaseOf(opts).replace(/\/+$/, '');
        const minted = await projects.mintCdnToken(project.id, base, { path: String(opts['path']), ttlS, wildcard: opts['wildcard'] === true, exactUrl: opts['exactUrl'] === true });
        process.stdout.write(opts['json'] ? JSON.stringify(minted) + '\n' : `${minted.url}\n`);
      });
    });

  const key = program.command('key').description('manage secret keys of a project');
  storeOptions(key.command('add').description('add a secret key'))
    .requiredOption('--pub-key <key>', 'project public key')
    .option('--json', 'print JSON', false)
    .action(async (opts: Record<string, unknown>) => {
      await withStores(opts, async ({ projects }) => {
        const k = await projects.addSecret(String(opts['pubKey']));
        process.stdout.write(opts['json'] ? JSON.stringify({ id: k.id, secret_key: k.secret }) + '\n' : `added key ${k.id}: ${k.secret}\n`);
      });
    });
  storeOptions(key.command('list').description('list secret keys (ids and last four characters)'))
    .requiredOption('--pub-key <key>', 'project public key')
    .option('--json', 'print JSON', false)
    .action(async (opts: Record<string, unknown>) => {
      await withStores(opts, async ({ projects }) => {
        const rows = (await projects.listSecrets(String(opts['pubKey']))).map((k) => ({ id: k.id, ends_with: k.secret.slice(-4), revoked: k.revokedUs !== null }));
        process.stdout.write(opts['json'] ? JSON.stringify(rows) + '\n' : rows.map((r) => `${r.id}  …${r.ends_with}${r.revoked ? '  (revoked)' : ''}`).join('\n') + '\n');
      });
    });
  storeOptions(key.command('revoke').description('revoke a secret key'))
    .requiredOption('--pub-key <key>', 'project public key')
    .requiredOption('--id <n>', 'key id (see key list)')
    .action(async (opts: Record<string, unknown>) => {
      await withStores(opts, async ({ projects }) => {
        await projects.revokeSecret(String(opts['pubKey']), Number(opts['id']));
        process.stdout.write(`revoked key ${String(opts['id'])}\n`);
      });
    });
  registerStorageCommands(program, { storeOptions, withStores });
  registerPluginCommands(program);
  registerDoctorCommand(program, { storeOptions, flagsOf, checks: async () => (await import('./doctor-checks.js')).doctorChecks });
  registerImportCommand(program, { storeOptions, flagsOf });
  return program;
}

/** The version in the package's package.json (one level above src/ and dist/). */
function packageVersion(): string {
  const pkg = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}

/** The CDN base a minted URL starts with: the flag, else STOWAGE_CDN_BASE_URL, else what `serve` would use. */
function cdnBaseOf(opts: Record<string, unknown>): string {
  const config = loadConfig({ ...flagsOf(opts), logLevel: 'warn' });
  return String(opts['cdnBase'] ?? baseUrls(config, { rest: config.restPort, upload: config.uploadPort, cdn: config.cdnPort }).cdn);
}

/** `npm start` should hand a new user working keys: create a demo project on first start. */
async function ensureDemoProject(projects: import('./projects/service.js').ProjectService): Promise<{ name: string; pubKey: string; secret: string } | null> {
  const existing = await projects.list();
  const demo = existing.find((p) => p.name === 'demo') ?? null;
  if (demo) {
    const secret = (await projects.listSecrets(demo.pubKey)).find((k) => k.revokedUs === null)?.secret ?? '(revoked)';
    return { name: demo.name, pubKey: demo.pubKey, secret };
  }
  if (existing.length > 0) return null;
  const created = await projects.create({ name: 'demo' });
  return { name: 'demo', pubKey: created.project.pubKey, secret: created.secretKey };
}

export async function main(argv: string[]): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (err) {
    if (err instanceof ConfigError) process.stderr.write(`stowage: ${err.message}\n`);
    else if (isAppError(err)) process.stderr.write(`stowage: ${err.message}\n`);
    else process.stderr.write(`stowage: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
