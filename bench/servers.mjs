// The servers under test: Stowage (bin/stowage.js), ipx, a bare node:http static server, nginx, and
// nginx as the shipped CDN front (deploy/nginx-cdn-front.conf) before a Stowage.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startProc, waitHttp } from './lib.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
// BENCH_APP_ROOT: another checkout whose build is run instead (before/after comparisons).
let ROOT = process.env.BENCH_APP_ROOT ? path.resolve(process.env.BENCH_APP_ROOT) : path.dirname(HERE);

/**
 * Runs Stowage from a private copy of bin/ and dist/: in a shared checkout a rebuild in the middle
 * of a bench run would otherwise swap the code under it.
 */
export function snapshotApp(work) {
  const app = path.join(work, 'app');
  for (const d of ['bin', 'dist', 'web']) fs.cpSync(path.join(ROOT, d), path.join(app, d), { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(app, 'package.json'));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(app, 'node_modules'));
  ROOT = app;
  return path.join(app, 'bin', 'stowage.js');
}

export async function stowage(dataDir, { pin = null, env = {} } = {}) {
  const port = await freePort();
  // BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof": profile the server under load.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  // --max-semi-space-size=4 as every launcher passes it (bin/stowage.js says why).
  const p = await startProc(process.execPath, ['--max-semi-space-size=4', ...nodeArgs, path.join(ROOT, 'bin', 'stowage.js'), 'serve'], {
    pin,
    env: { STOWAGE_DATA_DIR: dataDir, STOWAGE_CDN_PORT: String(port), STOWAGE_REST_PORT: '0', STOWAGE_UPLOAD_PORT: '0', STOWAGE_LOG_LEVEL: 'warn', ...env },
    ready: (out) => /Stowage is running/.test(out) && /\n/.test(out.split('CDN:')[1] ?? ''),
  });
  const upload = /Upload API:\s+(\S+?)\/?\n/.exec(p.output())?.[1] ?? null;
  return { ...p, base: `http://127.0.0.1:${port}`, upload };
}

export async function ipx(dir, { pin = null } = {}) {
  const port = await freePort();
  const p = await startProc(process.execPath, [path.join(HERE, 'ipx-server.mjs'), dir, String(port)], { pin, ready: (o) => o.includes('listening') });
  return { ...p, base: `http://127.0.0.1:${port}` };
}

export async function nodeStatic(dir, { pin = null } = {}) {
  const port = await freePort();
  const p = await startProc(process.execPath, [path.join(HERE, 'static-server.mjs'), dir, String(port)], { pin, ready: (o) => o.includes('listening') });
  return { ...p, base: `http://127.0.0.1:${port}` };
}

/** The S3 upload bench's do-nothing endpoint (s3-sink-server.mjs). */
export async function s3Sink({ pin = null } = {}) {
  const port = await freePort();
  const p = await startProc(process.execPath, [path.join(HERE, 's3-sink-server.mjs'), String(port)], { pin, ready: (o) => o.includes('listening') });
  return { ...p, base: `http://127.0.0.1:${port}` };
}

/**
 * nginx with a generated config: one worker, sendfile, no access log, everything under `work`.
 * `tuned`: the file-serving settings the CDN front's server has (open_file_cache, no TCP_CORK),
 * for comparing the front with a static server configured the same way.
 */
export async function nginx(dir, work, { pin = null, tuned = false } = {}) {
  const port = await freePort();
  const temp = (n) => path.join(work, `nginx-${n}`);
  const serverTuning = tuned ? ' open_file_cache max=4096 inactive=60s; tcp_nopush off;' : '';
  const conf = `worker_processes 1;
daemon off;
pid ${temp('pid')};
error_log ${temp('error.log')} warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  client_body_temp_path ${temp('body')};
  proxy_temp_path ${temp('proxy')};
  fastcgi_temp_path ${temp('fastcgi')};
  uwsgi_temp_path ${temp('uwsgi')};
  scgi_temp_path ${temp('scgi')};
  default_type application/octet-stream;
  server { listen 127.0.0.1:${port}; root ${dir};${serverTuning} location / { } }
}
`;
  const file = path.join(work, 'nginx.conf');
  fs.writeFileSync(file, conf);
  const p = await startProc('nginx', ['-p', work, '-c', file, '-e', temp('error.log')], { pin, ready: () => true });
  await waitHttp(`http://127.0.0.1:${port}/`);
  return { ...p, base: `http://127.0.0.1:${port}` };
}

/**
 * deploy/nginx-cdn-front.conf as shipped (its port, cache directory and upstream replaced) with
 * one worker in front of the Stowage at `upstreamBase`; the same main settings as nginx() above.
 */
export async function nginxFront(upstreamBase, work, { pin = null } = {}) {
  const port = await freePort();
  const dir = path.join(work, 'front');
  fs.mkdirSync(dir, { recursive: true });
  const front = fs
    .readFileSync(path.join(path.dirname(HERE), 'deploy', 'nginx-cdn-front.conf'), 'utf8')
    .replace('listen 8082;', `listen 127.0.0.1:${port};`)
    .replace('/var/cache/nginx/stowage-cdn', path.join(dir, 'cache'));
  const temp = (n) => `${n}_temp_path ${path.join(dir, n)};`;
  const conf = `worker_processes 1;
daemon off;
pid ${path.join(dir, 'pid')};
error_log ${path.join(dir, 'error.log')} warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(temp).join('\n  ')}
  upstream stowage_cdn { server ${new URL(upstreamBase).host}; keepalive 16; }
  proxy_http_version 1.1;
  proxy_set_header Connection "";
  proxy_set_header Host $http_host;
${front}
}
`;
  const file = path.join(dir, 'nginx.conf');
  fs.writeFileSync(file, conf);
  const p = await startProc('nginx', ['-p', dir, '-c', file, '-e', path.join(dir, 'error.log')], { pin, ready: () => true });
  await waitHttp(`http://127.0.0.1:${port}/`);
  return { ...p, base: `http://127.0.0.1:${port}` };
}
