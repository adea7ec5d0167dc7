/**
 * The kernel's doctor checks: the metadata store and the blob store (required), Redis, ffmpeg,
 * LibreOffice and the fonts the text overlay names (optional: each disables a part).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import type { Config } from '../config.js';
import { dbOptionsFrom, openDb } from '../db/connect.js';
import { openBlobStore } from '../blobs/select.js';
import { FAMILIES } from '../media/operations/text.js';
import { Redis } from 'ioredis';
import type { DoctorCheck } from './check.js';

/** Runs a program and resolves with its output; rejects with a readable reason (not installed, exit code). */
function runProgram(file: string, args: string[], timeoutMs = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024, env: { ...process.env, HOME: process.env['HOME'] ?? '/tmp' } }, (err, stdout, stderr) => {
      if (!err) return resolve(stdout || stderr);
      const code = (err as NodeJS.ErrnoException).code;
      reject(new Error(code === 'ENOENT' ? `${file} is not installed (not found on PATH)` : `${file} ${args.join(' ')} failed: ${(stderr || err.message).trim().split('\n')[0]}`));
    });
  });
}

const firstLine = (text: string): string => text.trim().split('\n')[0] ?? '';

export const databaseCheck: DoctorCheck = {
  name: 'database',
  required: true,
  disables: 'everything: the node cannot start without its metadata store',
  async run(config: Config) {
    const db = await openDb(dbOptionsFrom(config));
    try {
      await db.ping();
    } finally {
      await db.close();
    }
    if (!config.databaseUrl) return `SQLite in ${config.dataDir}`;
    return `PostgreSQL ${new URL(config.databaseUrl).host}, schema ${config.databaseSchema ?? 'public'}`;
  },
};

export const blobStoreCheck: DoctorCheck = {
  name: 'blob store',
  required: true,
  disables: 'uploads and delivery: file bytes have nowhere to go',
  async run(config: Config) {
    const blobs = await openBlobStore(config);
    try {
      await blobs.check?.();
    } finally {
      blobs.close?.();
    }
    if (config.s3Bucket) return `S3 bucket ${config.s3Bucket}${config.s3Endpoint ? ` at ${config.s3Endpoint}` : ''}`;
    const { bavail, bsize } = await fs.promises.statfs(config.dataDir);
    const free = bavail * bsize;
    const gib = (n: number) => `${(n / 1024 ** 3).toFixed(1)} GiB`;
    if (config.minFreeBytes > 0 && free < config.minFreeBytes) {
      throw new Error(`disk in ${config.dataDir}: ${gib(free)} free, below STOWAGE_MIN_FREE_BYTES (${gib(config.minFreeBytes)}): /readyz reports not ready`);
    }
    return `disk in ${config.dataDir}, ${gib(free)} free`;
  },
};

export const redisCheck: DoctorCheck = {
  name: 'redis',
  required: false,
  disables: 'counters and locks shared by nodes: throttling counts per node and CDN renders are not coordinated (fine for a single node)',
  async run(config: Config) {
    if (!config.redisUrl) return null;
    const redis = new Redis(config.redisUrl, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 3000, retryStrategy: () => null });
    redis.on('error', () => undefined); // the failed connect rejects below
    try {
      await redis.connect().catch((err: unknown) => {
        throw new Error(`not reachable at ${redactUrl(config.redisUrl ?? '')} (${err instanceof Error ? err.message : String(err)})`);
      });
      const pong = await redis.ping();
      const info = await redis.info('server');
      return `${pong} from ${redactUrl(config.redisUrl)}, redis ${/redis_version:(\S+)/.exec(info)?.[1] ?? '?'}`;
    } finally {
      redis.disconnect();
    }
  },
};

export const ffmpegCheck: DoctorCheck = {
  name: 'ffmpeg',
  required: false,
  disables: 'gif2video on the CDN (animated GIF to MP4/WebM); install the Debian package ffmpeg',
  async run() {
    return firstLine(await runProgram('ffmpeg', ['-hide_banner', '-version']));
  },
};

export const libreOfficeCheck: DoctorCheck = {
  name: 'libreoffice',
  required: false,
  disables: 'document conversion (office formats to PDF and back); install libreoffice-writer-nogui, -calc-nogui, -impress-nogui',
  async run() {
    return firstLine(await runProgram('soffice', ['--version'], 30_000));
  },
};

export const fontsCheck: DoctorCheck = {
  name: 'fonts',
  required: false,
  disables: 'the text overlay (-/text/) in the families it names; install fonts-dejavu-core, fonts-noto-core, fonts-noto-mono',
  async run() {
    const listed = new Set((await runProgram('fc-list', ['--format', '%{family}\n'])).split(/[\n,]/).map((f) => f.trim()));
    const wanted = [...new Set(Object.values(FAMILIES))];
    const absent = wanted.filter((f) => !listed.has(f));
    if (absent.length > 0) throw new Error(`missing font families: ${absent.join(', ')}`);
    return `${wanted.length} families of the text overlay installed (${wanted.join(', ')})`;
  },
};

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the configured URL';
  }
}

export const systemChecks: DoctorCheck[] = [databaseCheck, blobStoreCheck, redisCheck, ffmpegCheck, libreOfficeCheck, fontsCheck];
