// How soon background work starts after the request that asks for it (issue #19 item 5: a from_url
// fetch, an add-on or a conversion starts within 100 ms). Each start is seen from outside the
// server: the origin receiving the from_url GET, a clamd stand-in accepting the add-on's
// connection (it answers "stream: OK"; real clamd would only add its own scan time after the
// start), and ffprobe or ffmpeg (the conversion's first tool) appearing under the server (a child of its
// launcher helper).
// Requests go one at a time, on an otherwise idle server (SQLite unless STOWAGE_DATABASE_URL).
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { have } from './lib.mjs';
import { snapshotApp, stowage } from './servers.mjs';

const SAMPLES = Number(process.env.BENCH_START_SAMPLES ?? 20);
const TARGET_MS = 100;

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-bench-start-'));
const dataDir = path.join(work, 'data');
const BIN = snapshotApp(work);
const env = { ...process.env, STOWAGE_DATA_DIR: dataDir };
const keys = JSON.parse(execFileSync(process.execPath, [BIN, 'project', 'create', '--name', 'bench', '--json'], { env, encoding: 'utf8' }));

/** Resolves the `n`-th time `mark()` is called with a start time. */
function startWatch() {
  let waiting = null;
  return {
    mark() {
      const t = performance.now();
      waiting?.(t);
      waiting = null;
    },
    next() {
      return new Promise((resolve) => (waiting = resolve));
    },
  };
}

// The from_url origin: a small body, the GET's arrival marks the start.
const originSeen = startWatch();
const origin = http.createServer((req, res) => {
  originSeen.mark();
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '5' }).end('hello');
});
await new Promise((r) => origin.listen(0, '127.0.0.1', r));

// The clamd stand-in: the connection marks the start; any INSTREAM is answered clean.
const clamdSeen = startWatch();
const clamd = net.createServer((socket) => {
  clamdSeen.mark();
  let got = Buffer.alloc(0);
  socket.on('data', (d) => {
    got = Buffer.concat([got, d]);
    // The stream ends with a zero-length chunk: four zero bytes.
    if (got.length >= 4 && got.subarray(-4).equals(Buffer.alloc(4))) socket.end('stream: OK\0');
  });
  socket.on('error', () => undefined);
});
await new Promise((r) => clamd.listen(0, '127.0.0.1', r));

const s = await stowage(dataDir, {
  pin: 1,
  env: { STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8', STOWAGE_CLAMD_ADDRESS: `127.0.0.1:${clamd.address().port}`, STOWAGE_ONLY: 'rest,upload,cdn' },
});
const rest = /REST API:\s+(\S+?)\/?\n/.exec(s.output())[1];

async function signed(method, uri, body) {
  const type = 'application/json';
  const date = new Date().toUTCString();
  const md5 = crypto.createHash('md5').update(body).digest('hex');
  const sig = crypto.createHmac('sha1', keys.secret_key).update([method, md5, type, date, uri].join('\n')).digest('hex');
  const r = await fetch(rest + uri, { method, body: body || undefined, headers: { 'content-type': type, accept: 'application/vnd.uploadcare-v0.7+json', date, authorization: `Uploadcare ${keys.public_key}:${sig}` } });
  if (r.status >= 300) throw new Error(`${method} ${uri}: ${r.status} ${await r.text()}`);
  return r.json();
}

async function upload(name, bytes) {
  const form = new FormData();
  form.append('UPLOADCARE_PUB_KEY', keys.public_key);
  form.append('UPLOADCARE_STORE', '1');
  form.append('file', new Blob([bytes]), name);
  const r = await fetch(`${s.upload}/base/`, { method: 'POST', body: form });
  return (await r.json()).file;
}

/** Pids of the children of `pid` (any of its threads). */
function childrenOf(pid) {
  try {
    return fs.readdirSync(`/proc/${pid}/task`).flatMap((task) => fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean));
  } catch {
    return [];
  }
}

function commandOf(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

/**
 * Waits for a process under the server whose command line matches, and answers when it appeared.
 * Tools are children of the server's launcher helper (src/core/launcher/), so grandchildren count.
 */
async function childAppears(pattern, timeoutMs = 10_000) {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    for (const kid of childrenOf(s.pid)) {
      if ([kid, ...childrenOf(kid)].some((pid) => pattern.test(commandOf(pid)))) return performance.now();
    }
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`no child matching ${pattern} within ${timeoutMs} ms`);
}

async function measure(name, once) {
  const took = [];
  for (let i = 0; i < SAMPLES; i++) took.push(await once(i));
  took.sort((a, b) => a - b);
  const at = (q) => took[Math.min(took.length - 1, Math.floor(q * took.length))];
  const p95 = at(0.95);
  console.log(`${name.padEnd(38)} p50 ${at(0.5).toFixed(1).padStart(6)} ms  p95 ${p95.toFixed(1).padStart(6)} ms  max ${took.at(-1).toFixed(1).padStart(6)} ms  target p95 < ${TARGET_MS} ms ${p95 < TARGET_MS ? 'MET' : 'MISSED'}`);
}

console.log(`bench job-start: ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), ${SAMPLES} samples each, ${process.env.STOWAGE_DATABASE_URL ? 'PostgreSQL' : 'SQLite'}; server on core 1; load average ${os.loadavg()[0].toFixed(1)}`);
try {
  const originBase = `http://127.0.0.1:${origin.address().port}`;
  await measure('from_url: request -> origin GET', async (i) => {
    const seen = originSeen.next();
    const t0 = performance.now();
    const r = await fetch(`${s.upload}/from_url/`, { method: 'POST', body: new URLSearchParams({ pub_key: keys.public_key, source_url: `${originBase}/f-${i}.txt`, store: '1' }) });
    if (r.status !== 200) throw new Error(`from_url: ${r.status} ${await r.text()}`);
    return (await seen) - t0;
  });

  const target = await upload('scan-me.txt', crypto.randomBytes(2048));
  await measure('add-on: request -> clamd connect', async () => {
    const seen = clamdSeen.next();
    const t0 = performance.now();
    const { request_id: id } = await signed('POST', '/addons/uc_clamav_virus_scan/execute/', JSON.stringify({ target }));
    const t = (await seen) - t0;
    // One run per file at a time (a second is a 409): wait for this one to finish.
    for (let status = 'in_progress'; status === 'in_progress'; await new Promise((r) => setTimeout(r, 20))) {
      ({ status } = await signed('GET', `/addons/uc_clamav_virus_scan/execute/status/?request_id=${id}`, ''));
    }
    return t;
  });

  if (have('ffmpeg')) {
    const video = path.join(work, 'clip.mp4');
    execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10', '-t', '1', '-pix_fmt', 'yuv420p', video]);
    const uuid = await upload('clip.mp4', fs.readFileSync(video));
    // Conversions of one source to one target are deduplicated: each sample asks for another size.
    await measure('video conversion: request -> ffprobe', async (i) => {
      const t0 = performance.now();
      const appeared = childAppears(/ff(mpeg|probe)/);
      await signed('POST', '/convert/video/', JSON.stringify({ paths: [`${uuid}/video/-/size/${160 + 2 * (i + 1)}x/-/format/webm/`], store: '0' }));
      const t = (await appeared) - t0;
      // Let it finish so the next sample starts on an idle server.
      await new Promise((r) => setTimeout(r, 1500));
      return t;
    });
  } else {
    console.log('video conversion: skipped (no ffmpeg; Debian: apt-get install ffmpeg)');
  }
} finally {
  await s.stop();
  origin.close();
  clamd.close();
  fs.rmSync(work, { recursive: true, force: true });
}
