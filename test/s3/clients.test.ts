/**
 * The S3 surface with the command-line clients operators use: aws-cli, rclone and s3cmd (Debian
 * packages, installed by .ci/run). Each uploads, lists, downloads, syncs and deletes, with one
 * multipart upload of two parts (5 MiB and the rest).
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { S3_SERVER } from './helpers.js';

const run = promisify(execFile);
const srv = useServer(S3_SERVER);
const bucket = () => srv.keys.public_key;

let dir = '';
const big = crypto.randomBytes(6 * 1024 * 1024 + 12_345);

/** The clients' environment: no user config, no CA bundle override (rclone refuses one over plain HTTP). */
function clientEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'], HOME: dir, LANG: 'C.UTF-8', ...extra };
  return env;
}

async function tool(cmd: string, args: string[], env: Record<string, string>): Promise<string> {
  try {
    const { stdout } = await run(cmd, args, { env: clientEnv(env), maxBuffer: 16 * 1024 * 1024, timeout: 120_000 });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-s3-clients-'));
  fs.mkdirSync(path.join(dir, 'site', 'sub'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'site', 'index.html'), '<h1>hi</h1>');
  fs.writeFileSync(path.join(dir, 'site', 'sub', 'é ü.txt'), 'unicode name');
  fs.writeFileSync(path.join(dir, 'big.bin'), big);
});

/** Each client is a process started several times over (aws-cli's Python start alone takes seconds on a busy machine). */
const CLIENT_TEST_MS = 240_000;

const sameBytes = (file: string, expected: Buffer) => expect(crypto.createHash('md5').update(fs.readFileSync(file)).digest('hex')).toBe(crypto.createHash('md5').update(expected).digest('hex'));

describe('aws-cli', () => {
  // Debian's aws-cli v2 when installed there; any other on the PATH otherwise.
  const aws = fs.existsSync('/usr/bin/aws') ? '/usr/bin/aws' : 'aws';
  const env = () => {
    fs.writeFileSync(path.join(dir, 'aws-config'), '[default]\nregion = us-east-1\ns3 =\n  multipart_threshold = 5MB\n  multipart_chunksize = 5MB\n');
    return { AWS_ACCESS_KEY_ID: srv.keys.public_key, AWS_SECRET_ACCESS_KEY: srv.keys.secret_key, AWS_CONFIG_FILE: path.join(dir, 'aws-config'), AWS_SHARED_CREDENTIALS_FILE: path.join(dir, 'none'), AWS_EC2_METADATA_DISABLED: 'true' };
  };
  const cli = (...args: string[]) => tool(aws, ['--endpoint-url', srv.s3, ...args], env());
  // The transfer commands' progress lines would fill the output.
  const transfer = (...args: string[]) => cli('s3', ...args, '--only-show-errors');

  it('cp (multipart), sync, ls, head-object, recursive cp down, rm', async () => {
    const b = bucket();
    await transfer('cp', path.join(dir, 'big.bin'), `s3://${b}/aws/big.bin`);
    await transfer('sync', path.join(dir, 'site'), `s3://${b}/aws/site`);
    const listed = await cli('s3', 'ls', '--recursive', `s3://${b}/aws/`);
    expect(listed).toContain('aws/site/sub/é ü.txt');
    expect(listed).toMatch(new RegExp(`${big.length} aws/big.bin`));
    const head = JSON.parse(await cli('s3api', 'head-object', '--bucket', b, '--key', 'aws/big.bin')) as { ETag: string; ContentLength: number };
    expect([head.ContentLength, head.ETag.endsWith('-2"')]).toEqual([big.length, true]);
    // Down the tree: the multipart object and the unicode name come back as they went up.
    await transfer('cp', '--recursive', `s3://${b}/aws/`, path.join(dir, 'aws-down'));
    sameBytes(path.join(dir, 'aws-down', 'big.bin'), big);
    expect(fs.readFileSync(path.join(dir, 'aws-down', 'site', 'sub', 'é ü.txt'), 'utf8')).toBe('unicode name');
    await transfer('rm', '--recursive', `s3://${b}/aws/`);
    expect(await cli('s3', 'ls', '--recursive', `s3://${b}/aws/`).catch(() => '')).toBe('');
  }, CLIENT_TEST_MS);
});

describe('rclone', () => {
  const env = () => ({
    RCLONE_CONFIG: path.join(dir, 'none.conf'),
    RCLONE_CONFIG_ST_TYPE: 's3',
    RCLONE_CONFIG_ST_PROVIDER: 'Other',
    RCLONE_CONFIG_ST_ENDPOINT: srv.s3,
    RCLONE_CONFIG_ST_ACCESS_KEY_ID: srv.keys.public_key,
    RCLONE_CONFIG_ST_SECRET_ACCESS_KEY: srv.keys.secret_key,
  });
  const rclone = (...args: string[]) => tool('rclone', args, env());

  it('copy (multipart), ls, check (MD5s), cat, delete', async () => {
    const b = bucket();
    await rclone('copy', path.join(dir, 'site'), `st:${b}/rclone/site`);
    await rclone('copy', '--s3-upload-cutoff', '5M', '--s3-chunk-size', '5M', path.join(dir, 'big.bin'), `st:${b}/rclone`);
    const listed = await rclone('ls', `st:${b}/rclone`);
    expect(listed).toContain('site/sub/é ü.txt');
    expect(listed).toContain(`${big.length} big.bin`);
    // check compares sizes and MD5s (ETags of single-part objects) with the local files.
    await rclone('check', path.join(dir, 'site'), `st:${b}/rclone/site`);
    expect(await rclone('cat', `st:${b}/rclone/site/index.html`)).toBe('<h1>hi</h1>');
    await rclone('copyto', `st:${b}/rclone/big.bin`, path.join(dir, 'rclone-big.out'));
    sameBytes(path.join(dir, 'rclone-big.out'), big);
    await rclone('delete', `st:${b}/rclone`);
    expect(await rclone('ls', `st:${b}/rclone`)).toBe('');
  }, CLIENT_TEST_MS);
});

describe('s3cmd', () => {
  const config = () => {
    const host = new URL(srv.s3).host;
    const file = path.join(dir, 's3cfg');
    fs.writeFileSync(file, `[default]\naccess_key = ${srv.keys.public_key}\nsecret_key = ${srv.keys.secret_key}\nhost_base = ${host}\nhost_bucket = ${host}\nuse_https = False\nsignature_v2 = False\n`);
    return file;
  };
  const s3cmd = (...args: string[]) => tool('s3cmd', ['-c', config(), ...args], {});

  it('put (multipart), ls, get, info, sync, del', async () => {
    const b = bucket();
    expect(await s3cmd('ls')).toContain(`s3://${b}`);
    await s3cmd('put', '--multipart-chunk-size-mb=5', path.join(dir, 'big.bin'), `s3://${b}/s3cmd/big.bin`);
    await s3cmd('sync', `${path.join(dir, 'site')}/`, `s3://${b}/s3cmd/site/`);
    const listed = await s3cmd('ls', '-r', `s3://${b}/s3cmd/`);
    expect(listed).toContain(`s3://${b}/s3cmd/site/sub/é ü.txt`);
    expect(listed).toMatch(new RegExp(`${big.length}\\s+s3://${b}/s3cmd/big.bin`));
    await s3cmd('get', '--force', `s3://${b}/s3cmd/big.bin`, path.join(dir, 's3cmd-big.out'));
    sameBytes(path.join(dir, 's3cmd-big.out'), big);
    expect(await s3cmd('info', `s3://${b}/s3cmd/site/index.html`)).toMatch(/MIME type:\s+text\/html/);
    await s3cmd('del', '--recursive', '--force', `s3://${b}/s3cmd/`);
    expect(await s3cmd('ls', '-r', `s3://${b}/s3cmd/`)).toBe('');
  }, CLIENT_TEST_MS);
});
