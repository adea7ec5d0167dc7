/**
 * `stowage storage add|list|remove`: the project's custom storages (S3-compatible buckets that
 * remote copies write to). Admin-only by design: endpoints and credentials never come through the API.
 */
import type { Command } from 'commander';
import type { Db } from '../db/connect.js';
import type { ProjectService } from '../projects/service.js';
import { StorageService, type CustomStorage } from '../copies/storages/service.js';

export interface CliHelpers {
  storeOptions(cmd: Command): Command;
  withStores<T>(opts: Record<string, unknown>, fn: (stores: { db: Db; projects: ProjectService }) => Promise<T>): Promise<T>;
}

export function registerStorageCommands(program: Command, h: CliHelpers): void {
  const storage = program.command('storage').description('manage custom storages (S3-compatible buckets) for remote copies');
  h.storeOptions(storage.command('add').description('add a custom storage to a project'))
    .requiredOption('--pub-key <key>', 'project public key')
    .requiredOption('--name <name>', 'storage name (the `target` of remote copies)')
    .requiredOption('--bucket <bucket>', 'bucket name')
    .option('--endpoint <url>', 'S3 endpoint URL (omit for AWS)')
    .option('--region <region>', 'region', 'us-east-1')
    .requiredOption('--access-key-id <id>', 'access key id')
    .requiredOption('--secret-access-key <secret>', 'secret access key')
    .option('--force-path-style', 'address the bucket in the path (most non-AWS endpoints)', false)
    .option('--pattern <pattern>', 'default object key pattern', '${default}')
    .option('--json', 'print JSON', false)
    .action(async (opts: Record<string, unknown>) => {
      await h.withStores(opts, async ({ db, projects }) => {
        const project = await projects.require(String(opts['pubKey']));
        const s = await new StorageService(db).add({
          projectId: project.id,
          name: String(opts['name']),
          endpoint: typeof opts['endpoint'] === 'string' ? opts['endpoint'] : null,
          region: String(opts['region']),
          bucket: String(opts['bucket']),
          accessKeyId: String(opts['accessKeyId']),
          secretAccessKey: String(opts['secretAccessKey']),
          forcePathStyle: opts['forcePathStyle'] === true,
          pattern: String(opts['pattern']),
        });
        process.stdout.write(opts['json'] ? JSON.stringify(publicView(s)) + '\n' : `added storage ${s.name} (bucket ${s.bucket}) to ${project.pubKey}\n`);
      });
    });
  h.storeOptions(storage.command('list').description("list a project's custom storages (secrets are not printed)"))
    .requiredOption('--pub-key <key>', 'project public key')
    .option('--json', 'print JSON', false)
    .action(async (opts: Record<string, unknown>) => {
      await h.withStores(opts, async ({ db, projects }) => {
        const project = await projects.require(String(opts['pubKey']));
        const rows = (await new StorageService(db).list(project.id)).map(publicView);
        process.stdout.write(opts['json'] ? JSON.stringify(rows) + '\n' : rows.map((r) => `${r.name}  s3://${r.bucket}  ${r.endpoint ?? '(AWS)'}  ${r.pattern}`).join('\n') + '\n');
      });
    });
  h.storeOptions(storage.command('remove').description('remove a custom storage (objects already copied stay)'))
    .requiredOption('--pub-key <key>', 'project public key')
    .requiredOption('--name <name>', 'storage name')
    .action(async (opts: Record<string, unknown>) => {
      await h.withStores(opts, async ({ db, projects }) => {
        const project = await projects.require(String(opts['pubKey']));
        const gone = await new StorageService(db).remove(project.id, String(opts['name']));
        if (!gone) throw new Error(`no storage named ${String(opts['name'])} in ${project.pubKey}`);
        process.stdout.write(`removed storage ${String(opts['name'])}\n`);
      });
    });
}

function publicView(s: CustomStorage) {
  return { name: s.name, bucket: s.bucket, endpoint: s.endpoint, region: s.region, force_path_style: s.forcePathStyle, pattern: s.pattern, access_key_id: s.accessKeyId };
}
