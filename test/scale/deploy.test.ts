/**
 * deploy/ is tested where it can be without Docker: nginx accepts the proxy configuration, and the
 * compose file wires the services that deploy/stowage.env (the multi-node test's settings) names.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/server.js';

const DEPLOY = path.join(ROOT, 'deploy');
const read = (name: string) => fs.readFileSync(path.join(DEPLOY, name), 'utf8');
const hasNginx = (() => {
  try {
    execFileSync('nginx', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

function envFile(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of read('stowage.env').matchAll(/^([A-Z0-9_]+)=(.*)$/gm)) out[m[1] as string] = m[2] as string;
  return out;
}

/** Top-level service names of the compose file (two-space indented keys under `services:`). */
function services(): string[] {
  const text = read('docker-compose.yml');
  const body = text.slice(text.indexOf('\nservices:\n'), text.indexOf('\nvolumes:\n'));
  return [...body.matchAll(/^ {2}([a-z0-9-]+):\s*$/gm)].map((m) => m[1] as string);
}

describe('deploy/', () => {
  it.skipIf(!hasNginx)('nginx accepts the reverse proxy configuration (nginx -t)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-nginx-'));
    try {
      // Compose service names resolve only inside Docker; everything else is checked as written.
      const conf = read('nginx.conf').replace(/\bnode[12]:/g, '127.0.0.1:');
      const file = path.join(dir, 'nginx.conf');
      fs.writeFileSync(file, conf);
      const r = spawnSync('nginx', ['-t', '-c', file, '-p', dir, '-g', `pid ${dir}/nginx.pid; error_log ${dir}/error.log;`], { encoding: 'utf8' });
      expect(r.stderr).toMatch(/test is successful/);
      expect(r.status).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('nginx routes each surface to both nodes, which are compose services', () => {
    const conf = read('nginx.conf');
    const svc = services();
    for (const [upstream, port] of [['stowage_rest', 8080], ['stowage_upload', 8081], ['stowage_cdn', 8082]] as const) {
      const block = new RegExp(`upstream ${upstream} \\{([^}]*)\\}`).exec(conf)?.[1] ?? '';
      const hosts = [...block.matchAll(/server ([a-z0-9-]+):(\d+)/g)].map((m) => `${m[1]}:${m[2]}`);
      expect(hosts).toEqual([`node1:${port}`, `node2:${port}`]);
      expect(conf).toMatch(new RegExp(`listen ${port};[\\s\\S]*?proxy_pass http://${upstream};`));
    }
    expect(svc).toEqual(expect.arrayContaining(['node1', 'node2', 'proxy', 'postgres', 'minio', 'redis', 'migrate']));
  });

  it('every node gets deploy/stowage.env, and the services it names exist with matching credentials', () => {
    const compose = read('docker-compose.yml');
    const env = envFile();
    const svc = services();
    expect(compose).toMatch(/env_file: stowage\.env/);
    // The compose file does not override the shared settings per node.
    const overridden = Object.keys(env).filter((k) => new RegExp(`^\\s+${k}:`, 'm').test(compose));
    expect(overridden).toEqual([]);
    const db = new URL(env['STOWAGE_DATABASE_URL'] as string);
    expect(svc).toContain(db.hostname);
    expect(compose).toContain(`POSTGRES_USER: ${db.username}`);
    expect(compose).toContain(`POSTGRES_PASSWORD: ${db.password}`);
    expect(compose).toContain(`POSTGRES_DB: ${db.pathname.slice(1)}`);
    expect(svc).toContain(new URL(env['STOWAGE_S3_ENDPOINT'] as string).hostname);
    expect(compose).toContain(`MINIO_ROOT_USER: ${env['STOWAGE_S3_ACCESS_KEY_ID']}`);
    expect(compose).toContain(`MINIO_ROOT_PASSWORD: ${env['STOWAGE_S3_SECRET_ACCESS_KEY']}`);
    expect(compose).toContain(`mc mb --ignore-existing local/${env['STOWAGE_S3_BUCKET']}`);
    expect(svc).toContain(new URL(env['STOWAGE_REDIS_URL'] as string).hostname);
    // The orchestrator waits longer than the node's own drain before killing it.
    const grace = Number(env['STOWAGE_SHUTDOWN_GRACE_MS']);
    const stop = Number(/stop_grace_period: (\d+)s/.exec(compose)?.[1]) * 1000;
    expect(stop).toBeGreaterThan(grace);
  });

  it('the image recipe: node:20-bookworm-slim by default (an argument), what a node needs, a non-root user and a health check', () => {
    const df = read('Dockerfile');
    expect(df).toMatch(/^ARG BASE_IMAGE=node:20-bookworm-slim$/m);
    expect(df).toMatch(/^FROM \$\{BASE_IMAGE\} AS build$/m);
    expect(df).toMatch(/^FROM \$\{BASE_IMAGE\}$/m);
    const runtime = df.slice(df.search(/^FROM \$\{BASE_IMAGE\}$/m));
    for (const pkg of ['ffmpeg', 'poppler-utils', 'libreoffice-writer-nogui', 'libreoffice-calc-nogui', 'libreoffice-impress-nogui', 'fonts-dejavu-core', 'tini', 'bubblewrap']) {
      expect(runtime).toMatch(new RegExp(`apt-get install[^]*?\\b${pkg}\\b`));
    }
    expect(df).toMatch(/npm ci/);
    expect(df).toMatch(/npm run build && npm prune --omit=dev/);
    for (const dir of ['node_modules', 'dist', 'bin']) expect(runtime).toContain(`COPY --from=build /app/${dir} ./${dir}`);
    expect(runtime).toMatch(/^COPY web \.\/web$/m);
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^HEALTHCHECK .*deploy\/healthcheck\.mjs/m);
    expect(df).toMatch(/CMD \["serve"\]/);
    // web/ must reach the build context.
    expect(read('Dockerfile.dockerignore').split('\n')).not.toContain('web');
  });

  it('clamd is its own service, and the nodes share one plugins volume', () => {
    const compose = read('docker-compose.yml');
    expect(services()).toContain('clamav');
    expect(compose).toMatch(/STOWAGE_CLAMD_ADDRESS: clamav:3310/);
    expect(compose.match(/- plugins:\/var\/lib\/stowage\/plugins/g)?.length).toBe(2);
  });
});
