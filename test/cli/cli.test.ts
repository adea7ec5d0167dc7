import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT, newSchema } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { restClient } from '../helpers/rest.js';

const BIN = path.join(ROOT, 'bin', 'stowage.js');
const schema = newSchema();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-cli-'));
const env = { ...process.env, STOWAGE_DATA_DIR: dataDir, ...(schema ? { STOWAGE_DATABASE_SCHEMA: schema } : {}) };
const run = (args: string[], extraEnv: Record<string, string> = {}) => spawnSync(process.execPath, [BIN, ...args], { env: { ...env, ...extraEnv }, encoding: 'utf8' });
// Between two requests to the running server the test process must not block: while blocked it
// misses the server closing an idle kept-alive connection, and its next request fails on it.
const runAsync = (args: string[]) => promisify(execFile)(process.execPath, [BIN, ...args], { env, encoding: 'utf8' });

const srv = useServer({ dataDir, ...(schema ? { schema } : {}) });

describe('stowage CLI', () => {
  it('creates and lists projects; keys can be added, listed and revoked, and every active key works', async () => {
    const created = run(['project', 'create', '--data-dir', dataDir, '--name', 'shop', '--json']);
    expect(created.status).toBe(0);
    const p = JSON.parse(created.stdout);
    expect(p).toMatchObject({ name: 'shop', autostore: true, signed_uploads: false });
    expect(p.public_key).toMatch(/^[0-9a-f]{20}$/);
    expect(p.secret_key).toMatch(/^[0-9a-f]{40}$/);
    const list = JSON.parse(run(['project', 'list', '--json']).stdout) as Array<{ public_key: string }>;
    expect(list.map((x) => x.public_key)).toContain(p.public_key);

    const added = JSON.parse(run(['key', 'add', '--pub-key', p.public_key, '--json']).stdout);
    const second = { public_key: p.public_key, secret_key: added.secret_key as string };
    expect((await restClient(srv.rest, p)('GET', '/files/')).status).toBe(200);
    expect((await restClient(srv.rest, second)('GET', '/files/')).status).toBe(200);

    const keys = JSON.parse(run(['key', 'list', '--pub-key', p.public_key, '--json']).stdout) as Array<{ id: number; revoked: boolean }>;
    expect(keys).toHaveLength(2);
    expect(JSON.stringify(keys)).not.toContain(p.secret_key);
    const first = keys[0] as { id: number };
    expect(run(['key', 'revoke', '--pub-key', p.public_key, '--id', String(first.id)]).status).toBe(0);
    // The server caches keys for at most 2 s.
    await new Promise((r) => setTimeout(r, 2500));
    expect((await restClient(srv.rest, p)('GET', '/files/')).status).toBe(401);
    expect((await restClient(srv.rest, second)('GET', '/files/')).status).toBe(200);
    const last = run(['key', 'revoke', '--pub-key', p.public_key, '--id', String((keys[1] as { id: number }).id)]);
    expect(last.status).toBe(1);
    expect(last.stderr).toMatch(/last active secret key/);
  });

  it('switches signed uploads and autostore', () => {
    const p = JSON.parse(run(['project', 'create', '--name', 'x', '--json', '--signed-uploads', '--autostore', 'off']).stdout);
    expect(p).toMatchObject({ signed_uploads: true, autostore: false });
    const out = run(['project', 'set', '--pub-key', p.public_key, '--signed-uploads', 'off', '--autostore', 'on']);
    expect(out.stdout).toMatch(/autostore on, signed uploads off/);
    expect(run(['project', 'set', '--pub-key', 'unknown-key', '--autostore', 'on']).status).toBe(1);
  });

  it("sets glibc's allocator settings in its #! line, and serve says so when started without them", () => {
    const bare = Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('MALLOC_')));
    const warning = /MALLOC_ARENA_MAX is not set/;
    const direct = spawnSync(BIN, ['serve', '--help'], { env: bare, encoding: 'utf8' });
    expect(direct.status, direct.stderr).toBe(0);
    expect(direct.stderr).not.toMatch(warning);
    const byNode = spawnSync(process.execPath, [BIN, 'serve', '--help'], { env: bare, encoding: 'utf8' });
    expect(byNode.status).toBe(0);
    expect(byNode.stderr).toMatch(warning);
    expect(spawnSync(process.execPath, [BIN, 'serve', '--help'], { env: { ...bare, MALLOC_ARENA_MAX: '2' }, encoding: 'utf8' }).stderr).not.toMatch(warning);
  });

  it('validates configuration at start with clear messages', () => {
    const bad = run(['serve', '--rest-port', 'eighty'], { STOWAGE_CDN_PORT: '70000' });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('restPort (--rest-port / STOWAGE_REST_PORT)');
    expect(bad.stderr).toContain('cdnPort (--cdn-port / STOWAGE_CDN_PORT)');
    const db = run(['serve'], { STOWAGE_DATABASE_URL: 'mysql://x' });
    expect(db.stderr).toMatch(/databaseUrl must start with postgres/);
    const tls = run(['serve'], { STOWAGE_TLS_CERT_FILE: '/nonexistent' });
    expect(tls.stderr).toMatch(/tlsCertFile and tlsKeyFile must be given together/);
  });
});

describe('a first run', () => {
  // Not spawnSync: the suite's server must not see this process blocked (see runAsync).
  const runIn = async (cwd: string, runEnv: NodeJS.ProcessEnv, args: string[]) => {
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [BIN, ...args], { cwd, env: runEnv, encoding: 'utf8' });
      return { status: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { status: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  };

  it('prints the version of the package', async () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const r = await runIn(ROOT, env, [flag]);
      expect(r.status).toBe(0);
      expect(r.stdout.trim()).toBe(version);
    }
  });

  it("the README's command list names every command", async () => {
    const help = (await runIn(ROOT, env, ['--help'])).stdout;
    const commands = [...help.slice(help.indexOf('Commands:')).matchAll(/^  ([a-z]+)\b/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
    expect(commands).toEqual(expect.arrayContaining(['serve', 'project', 'plugin', 'doctor']));
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Command line'), readme.indexOf('\n## ', readme.indexOf('## Command line') + 3));
    expect(commands.filter((c) => !new RegExp(`^stowage ${c}\\b`, 'm').test(section))).toEqual([]);
    expect(section).toContain('stowage --version');
  });

  it('project list in a folder without data says where it looked, and creates nothing there', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-nodata-'));
    const bare = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('STOWAGE_')));
    for (const args of [['project', 'list', '--json'], ['key', 'list', '--pub-key', 'x']]) {
      const r = await runIn(empty, bare, args);
      expect(r.status, args.join(' ')).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`no Stowage data in ${path.join(fs.realpathSync(empty), 'data')}`);
      expect(r.stderr).toContain('--data-dir');
    }
    expect(fs.readdirSync(empty)).toEqual([]);
    // Creating a project is how a store starts: that one may make the folder.
    const created = await runIn(empty, bare, ['project', 'create', '--name', 'first', '--json']);
    expect(created.status, created.stderr).toBe(0);
    const listed = await runIn(empty, bare, ['project', 'list', '--json']);
    expect(JSON.parse(listed.stdout)).toMatchObject([{ name: 'first' }]);
  });
});

describe('new keys work at once', () => {
  it('a key added while the server runs signs REST requests immediately', async () => {
    const p = JSON.parse(run(['project', 'create', '--name', 'fresh', '--json']).stdout);
    // Warm the server's key cache with the first key.
    expect((await restClient(srv.rest, p)('GET', '/files/')).status).toBe(200);
    const added = JSON.parse((await runAsync(['key', 'add', '--pub-key', p.public_key, '--json'])).stdout);
    const r = await restClient(srv.rest, { public_key: p.public_key, secret_key: added.secret_key })('GET', '/files/');
    expect(r.status).toBe(200);
  });
});
