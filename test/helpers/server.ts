/**
 * Starts a real Stowage server as a child process (the built CLI) on ephemeral ports, with its own
 * data dir and, when STOWAGE_DATABASE_URL points at PostgreSQL, its own schema. Tests talk to it
 * over real HTTP only.
 */
import { spawn, execFile, execFileSync, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startS3, type TestS3 } from './s3.js';

export const ROOT = path.resolve(__dirname, '..', '..');
const execFileAsync = promisify(execFile);
const BIN = path.join(ROOT, 'bin', 'stowage.js');

export interface ProjectKeys {
  public_key: string;
  secret_key: string;
}

export interface StartOptions {
  env?: Record<string, string>;
  /** Reuse a data dir / schema (restart after a crash, second node). */
  dataDir?: string;
  schema?: string;
  args?: string[];
  /** S3 mode: the bucket to use (a second node on the same bucket); default: the data dir's own. */
  bucket?: string;
}

export interface TestServer {
  /** S3 mode: the bucket holding this server's blobs. */
  bucket: string | undefined;
  rest: string;
  upload: string;
  cdn: string;
  /** The S3-compatible surface, when the server was started with it (STOWAGE_ONLY=…,s3). */
  s3: string | undefined;
  dataDir: string;
  schema: string | undefined;
  child: ChildProcess;
  env: Record<string, string>;
  output(): string;
  createProject(extra?: string[]): Promise<ProjectKeys>;
  cli(args: string[]): string;
  stop(): Promise<void>;
  kill(): Promise<void>;
}

export const usingPostgres = (): boolean => /^postgres/.test(process.env['STOWAGE_DATABASE_URL'] ?? '');

/** STOWAGE_TEST_S3=1: every server keeps its blobs in an S3-compatible endpoint (one s3rver per test process). */
export const usingS3 = (): boolean => /^(1|true|yes)$/i.test(process.env['STOWAGE_TEST_S3'] ?? '');

let s3: Promise<TestS3> | null = null;
/** Bucket of each data dir, so a restart on the same data dir sees the same bytes. */
const buckets = new Map<string, string>();

export function testS3(): Promise<TestS3> {
  s3 ??= startS3();
  return s3;
}

async function s3Env(dataDir: string, bucket: string | undefined): Promise<Record<string, string>> {
  if (!usingS3()) return {};
  const endpoint = await testS3();
  const name = bucket ?? buckets.get(dataDir) ?? (await endpoint.createBucket());
  buckets.set(dataDir, name);
  return endpoint.env(name);
}

/** Whether a server's blob store holds `key` (its data dir, or its bucket in S3 mode). */
export async function blobExists(server: Pick<TestServer, 'dataDir' | 'bucket'>, key: string): Promise<boolean> {
  if (!server.bucket) return fs.existsSync(path.join(server.dataDir, 'blobs', key));
  const { HeadObjectCommand } = await import('@aws-sdk/client-s3');
  const endpoint = await testS3();
  return endpoint.client.send(new HeadObjectCommand({ Bucket: server.bucket, Key: key })).then(
    () => true,
    () => false,
  );
}

/**
 * Replaces the bytes under `key` behind the server's back (its data dir, or its bucket in S3 mode):
 * for tests that tell whether a response came from the server's memory or from the store.
 */
export async function overwriteBlob(server: Pick<TestServer, 'dataDir' | 'bucket'>, key: string, bytes: Buffer): Promise<void> {
  if (!server.bucket) return fs.writeFileSync(path.join(server.dataDir, 'blobs', key), bytes);
  const { PutObjectCommand } = await import('@aws-sdk/client-s3');
  const endpoint = await testS3();
  await endpoint.client.send(new PutObjectCommand({ Bucket: server.bucket, Key: key, Body: bytes }));
}

export function newSchema(): string | undefined {
  // The creation time in the name lets a later run drop leftovers without touching live ones.
  return usingPostgres() ? `t_${Math.floor(Date.now() / 1000)}_${crypto.randomBytes(4).toString('hex')}` : undefined;
}

/** How long a server may take to print its URLs; a machine loaded by other work may need more (set it with vitest's --hookTimeout). */
export const START_TIMEOUT_MS = Number(process.env['STOWAGE_TEST_START_TIMEOUT_MS'] ?? 30_000);

/**
 * The environment bin/stowage.js's first line sets (`#!/usr/bin/env -S NAME=value ... node`):
 * glibc's allocator settings, which a process reads only when it starts. Test servers get them as
 * an installed node does, so what a test measures of memory is what an operator gets.
 */
export function launcherEnv(): Record<string, string> {
  const shebang = fs.readFileSync(BIN, 'utf8').split('\n', 1)[0] ?? '';
  return Object.fromEntries([...shebang.matchAll(/\s([A-Z_]+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
}

export async function startServer(opts: StartOptions = {}): Promise<TestServer> {
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-test-'));
  const schema = opts.schema ?? newSchema();
  const env: Record<string, string> = {
    ...launcherEnv(),
    ...(process.env as Record<string, string>),
    STOWAGE_DATA_DIR: dataDir,
    STOWAGE_REST_PORT: '0',
    STOWAGE_UPLOAD_PORT: '0',
    STOWAGE_CDN_PORT: '0',
    STOWAGE_S3_API_PORT: '0',
    STOWAGE_LOG_LEVEL: 'warn',
    STOWAGE_JOB_POLL_MS: '200',
    // Every answer of a described route must match the schema declared for its status (else a 500).
    STOWAGE_CHECK_RESPONSES: '1',
    // Two test files run at once, some with several nodes each: at the default pool (10) they came
    // near PostgreSQL's 100 connections (79 seen) and past it on a slower machine.
    STOWAGE_DATABASE_POOL_MAX: '5',
    // Removals are final at once, so suites about reclaimed bytes see them go without waiting a
    // day; test/files/restore.test.ts sets a window of its own.
    STOWAGE_RESTORE_WINDOW_MS: '0',
    ...(schema ? { STOWAGE_DATABASE_SCHEMA: schema } : {}),
    ...(await s3Env(dataDir, opts.bucket)),
    ...opts.env,
  };
  // The young-generation size every launcher passes (bin/stowage.js says why).
  const child = spawn(process.execPath, ['--max-semi-space-size=4', BIN, 'serve', ...(opts.args ?? [])], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const urls = await new Promise<{ rest: string; upload: string; cdn: string; s3: string | undefined }>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Never leave a half-started server behind (it would outlive the test run).
      child.kill('SIGKILL');
      reject(new Error(`server did not start:\n${out}`));
    }, START_TIMEOUT_MS);
    const check = () => {
      const rest = /REST API:\s+(\S+?)\/?\n/.exec(out)?.[1];
      const upload = /Upload API:\s+(\S+?)\/?\n/.exec(out)?.[1];
      const cdn = /CDN:\s+(\S+?)\/?\n/.exec(out)?.[1];
      const s3 = /S3 API:\s+(\S+?)\/?\n/.exec(out)?.[1];
      // The banner is printed in one write: the S3 line, when served, is there with the others.
      if (rest && upload && cdn && /Stowage is running/.test(out)) {
        clearTimeout(timer);
        resolve({ rest, upload, cdn, s3 });
      }
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${out}`));
    });
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const cli = (args: string[]): string => execFileSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8' });
  return {
    ...urls,
    bucket: env['STOWAGE_S3_BUCKET'],
    dataDir,
    schema,
    child,
    env,
    output: () => out,
    cli,
    async createProject(extra: string[] = []) {
      // Not execFileSync: a test process blocked for the seconds a CLI start takes on a busy machine
      // misses the server closing its idle keep-alive sockets, and its next request fails (EPIPE).
      const { stdout } = await execFileAsync(process.execPath, [BIN, 'project', 'create', '--name', `p${crypto.randomBytes(3).toString('hex')}`, '--json', ...extra], { env, encoding: 'utf8' });
      return JSON.parse(stdout) as ProjectKeys;
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        // A test may have left it stopped (SIGSTOP): a stopped process acts on SIGTERM only once continued.
        child.kill('SIGCONT');
      }
      await exited;
    },
    async kill() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** RSS of a process in bytes, from /proc (Linux). */
export function rssBytes(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  return Number(kb) * 1024;
}

/** Runs the CLI once with the given env (for admin commands outside a server). */
export function runCli(args: string[], env: Record<string, string>): string {
  return execFileSync(process.execPath, [BIN, ...args], { env: { ...(process.env as Record<string, string>), ...env }, encoding: 'utf8' });
}
