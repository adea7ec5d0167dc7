// `node bench/uploads.mjs`: a 1 GiB direct upload (`POST /base/`, one multipart/form-data body
// streamed as curl -F sends it: the public key field, then the file) and a 1 GiB multipart upload
// through the Upload API (parts of the documented default size, 5 MiB, 4 PUTs at a time on
// kept-alive connections, then /multipart/complete/) against their floors: a bare node:http server streaming one 1 GiB PUT into a
// file and fsyncing it, and `dd conv=fsync` of the same bytes. Prints MiB/s, the completion's own
// time and the ratios. BENCH_UPLOAD_MIB changes the size, BENCH_ROUNDS the rounds (best kept);
// BENCH_APP_ROOT runs another checkout's build (bin/, dist/) for a before/after comparison;
// BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the server; BENCH_CASES=direct or
// multipart runs one case, and direct-now / multipart-now the same with the digests computed before
// the answer (STOWAGE_DIGEST_LATER_BYTES=0; by default a 1 GiB body gets them from a job after it).
// Each case gets its own server, whose peak RSS (VmHWM) and CPU time per upload (all threads, the
// main thread alone, and every other thread's, the later digests included) are printed, and how long
// after the answer the CDN had the file's MD5. The `client` case is the official upload client's
// `uploadFile` (@uploadcare/upload-client, its defaults: 5 MiB parts, 4 at a time, then its
// `is_ready` polling) on the same file held in memory, as an application hands it a Buffer: the
// number users get. Its requests are timed from inside the bench (start, parts, completion, polls)
// and its sockets counted, so a slow case says where its time went. The `browser` case is the same
// client's browser build (the code of the upload widget and of a web page) in Debian's headless
// Chromium, uploading the same bytes as a Blob fetched by the page; the page's origin is another
// port, so CORS is on the path as for any site. Skipped without /usr/bin/chromium. Its floor,
// `browser-floor`, is the same page and client against bench/bare-multipart-server.mjs (a bare
// node:http server: CORS preflights, each part streamed at its offset into one file and fsynced,
// no authentication, store or digests): what Chromium can send on this machine. Both browser cases
// print, from the kernel's counters of Chromium's sockets (`ss -ti`), the share of their sending
// time that waited for the server's receive window: how far the server held the client back.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLK_TCK, cpuTicks, freePort, have, startProc } from './lib.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const APP = process.env.BENCH_APP_ROOT ?? path.dirname(HERE);
const MiB = 1024 * 1024;
const SIZE = Number(process.env.BENCH_UPLOAD_MIB ?? 1024) * MiB;
const PART = 5 * MiB;
const AT_ONCE = 4;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CASES = (process.env.BENCH_CASES ?? 'direct,multipart,client,browser,browser-floor').split(',');
const CHROMIUM = '/usr/bin/chromium';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-bench-up-'));
const source = path.join(work, 'source.bin');

/** SIZE bytes of random data (a 64 MiB random block repeated: nothing here compresses or dedups by block). */
function writeSource() {
  const block = crypto.randomBytes(64 * MiB);
  const fd = fs.openSync(source, 'w');
  for (let at = 0; at < SIZE; at += block.length) fs.writeSync(fd, block, 0, Math.min(block.length, SIZE - at));
  fs.closeSync(fd);
}

function readPart(fd, n) {
  const len = Math.min(PART, SIZE - n * PART);
  const buf = Buffer.allocUnsafe(len);
  fs.readSync(fd, buf, 0, len, n * PART);
  return buf;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: AT_ONCE });

function send(method, url, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers: { ...headers, 'content-length': body.length } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const form = (fields) => Buffer.from(new URLSearchParams(fields).toString());
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** One multipart upload of the source file; seconds in all and for the completion alone. */
async function multipartOnce(upload, publicKey) {
  const t0 = performance.now();
  const start = await send('POST', `${upload}/multipart/start/`, form({ UPLOADCARE_PUB_KEY: publicKey, filename: 'big.bin', content_type: 'application/octet-stream', size: String(SIZE), part_size: String(PART), UPLOADCARE_STORE: '1' }), FORM);
  if (start.status !== 200) throw new Error(`start: ${start.status} ${start.text}`);
  const { uuid, parts } = JSON.parse(start.text);
  const fd = fs.openSync(source, 'r');
  let next = 0;
  const worker = async () => {
    while (next < parts.length) {
      const n = next++;
      const r = await send('PUT', parts[n], readPart(fd, n), { 'content-type': 'application/octet-stream' });
      if (r.status !== 200) throw new Error(`part ${n + 1}: ${r.status} ${r.text}`);
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, worker));
  fs.closeSync(fd);
  const t1 = performance.now();
  const done = await send('POST', `${upload}/multipart/complete/`, form({ UPLOADCARE_PUB_KEY: publicKey, uuid }), FORM);
  if (done.status !== 200) throw new Error(`complete: ${done.status} ${done.text}`);
  const t2 = performance.now();
  return { total: (t2 - t0) / 1000, complete: (t2 - t1) / 1000, uuid };
}

/**
 * What the official client's requests did in one `uploadFile`: each request's kind and span (ms
 * from the upload's start), and how many sockets it opened. The client calls `http.request` on
 * node:http's module object for each request, so wrapping that function sees all of them.
 */
function traceClientRequests() {
  const original = http.request;
  const spans = [];
  const sockets = new Set();
  const t0 = performance.now();
  http.request = function tracedRequest(...args) {
    const req = original.apply(this, args);
    const kind = /\/multipart\/start\//.test(req.path) ? 'start' : /\/multipart\/complete\//.test(req.path) ? 'complete' : /\/info\//.test(req.path) ? 'info' : 'part';
    const span = { kind, from: performance.now() - t0, to: NaN };
    spans.push(span);
    req.on('socket', (s) => sockets.add(s));
    req.on('response', (res) => res.on('end', () => (span.to = performance.now() - t0)));
    return req;
  };
  return {
    stop() {
      http.request = original;
      const of = (kind) => spans.filter((s) => s.kind === kind);
      const parts = of('part');
      return {
        startS: of('start')[0]?.to / 1000,
        partsS: (Math.max(...parts.map((s) => s.to)) - Math.min(...parts.map((s) => s.from))) / 1000,
        completeS: of('complete').reduce((t, s) => t + s.to - s.from, 0) / 1000,
        infoPolls: of('info').length,
        afterCompleteS: of('info').length ? (Math.max(...of('info').map((s) => s.to)) - Math.max(...of('complete').map((s) => s.to))) / 1000 : 0,
        requests: spans.length,
        sockets: sockets.size,
      };
    },
  };
}

let sourceBuffer = null;

/** One `uploadFile` of the official upload client with its defaults (multipart above 25 MB). */
async function clientOnce(upload, publicKey) {
  const { uploadFile } = await import('@uploadcare/upload-client');
  sourceBuffer ??= fs.readFileSync(source);
  const trace = traceClientRequests();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let file;
  let steps;
  try {
    file = await uploadFile(sourceBuffer, { publicKey, baseURL: upload, fileName: 'big.bin', contentType: 'application/octet-stream', store: true });
  } finally {
    steps = trace.stop();
  }
  const total = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { total, complete: steps.completeS, steps: { ...steps, clientCpuS: (cpu.user + cpu.system) / 1e6 }, uuid: file.uuid };
}

/**
 * A headless Chromium on a page of its own origin that can fetch the source bytes and import the
 * official client's browser build (both served here): launched at the first browser round, kept.
 */
let browserPage = null;
async function openBrowserPage() {
  if (browserPage) return browserPage;
  const { chromium } = await import('playwright-core');
  const clientBuild = path.join(path.dirname(HERE), 'node_modules', '@uploadcare', 'upload-client', 'dist', 'esm', 'index.browser.mjs');
  const pages = http.createServer((req, res) => {
    if (req.url === '/upload-client.mjs') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      return fs.createReadStream(clientBuild).pipe(res);
    }
    if (req.url === '/source.bin') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': SIZE });
      return fs.createReadStream(source).pipe(res);
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>bench</title>');
  });
  await new Promise((r) => pages.listen(0, '127.0.0.1', r));
  // The flags of the dashboard's browser test: no network beyond this machine is reachable.
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${pages.address().port}/`);
  await page.evaluate(async () => {
    window.source = await (await fetch('/source.bin')).blob();
  });
  browserPage = { page, async close() { await browser.close(); pages.close(); } };
  return browserPage;
}

/** One `uploadFile` of the client's browser build in Chromium, timed in the page. */
async function browserOnce(upload, publicKey) {
  const { page } = await openBrowserPage();
  const r = await page.evaluate(async ({ upload, publicKey }) => {
    const { uploadFile } = await import('/upload-client.mjs');
    const t0 = performance.now();
    const file = await uploadFile(window.source, { publicKey, baseURL: upload, fileName: 'big.bin', contentType: 'application/octet-stream', store: true });
    return { total: (performance.now() - t0) / 1000, uuid: file.uuid };
  }, { upload, publicKey });
  return { ...r, complete: 0 };
}

/**
 * Chromium's sockets to `port` (the client's side): the milliseconds they had bytes to send (busy)
 * and, of those, waited for the receiver's window (rwnd_limited), summed. Counters of each socket's
 * life: the kept-alive connections of every round so far. Null without `ss`.
 */
function senderWaits(port) {
  if (!have('ss')) return null;
  const out = execFileSync('ss', ['-tinH', 'state', 'established', `( dport = :${port} )`], { encoding: 'utf8' });
  let busy = 0;
  let rwnd = 0;
  for (const m of out.matchAll(/busy:(\d+)ms(?: rwnd_limited:(\d+)ms)?/g)) {
    busy += Number(m[1]);
    rwnd += Number(m[2] ?? 0);
  }
  return busy ? { busyS: busy / 1000, rwndShare: rwnd / busy } : null;
}

/** The browser case against the bare server: a fresh one, its rounds, its CPU per upload. */
async function browserFloorRounds() {
  const port = await freePort();
  const dir = path.join(work, 'bare-multipart');
  const p = await startProc(process.execPath, [path.join(HERE, 'bare-multipart-server.mjs'), dir, String(port), String(PART)], { ready: (o) => o.includes('listening') });
  try {
    const upload = `http://127.0.0.1:${port}`;
    const ticks0 = cpuTicks(p.pid);
    const runs = [];
    for (let i = 0; i < ROUNDS; i++) runs.push(await browserOnce(upload, 'bench'));
    return { ...runs.sort((a, b) => a.total - b.total)[0], cpuS: (cpuTicks(p.pid) - ticks0) / CLK_TCK / ROUNDS, waits: senderWaits(port) };
  } finally {
    await p.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** One direct upload (POST /base/) of the source file, streamed as one multipart/form-data body. */
async function directOnce(upload, publicKey) {
  const boundary = `----stowagebench${crypto.randomBytes(8).toString('hex')}`;
  const field = (name, value) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const head = Buffer.from(
    field('UPLOADCARE_PUB_KEY', publicKey) + field('UPLOADCARE_STORE', '1') +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const t0 = performance.now();
  const res = await new Promise((resolve, reject) => {
    const headers = { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + SIZE + tail.length };
    const req = http.request(`${upload}/base/`, { method: 'POST', agent, headers }, (r) => {
      const chunks = [];
      r.on('data', (c) => chunks.push(c));
      r.on('end', () => resolve({ status: r.statusCode, text: Buffer.concat(chunks).toString() }));
      r.on('error', reject);
    });
    req.on('error', reject);
    req.write(head);
    const file = fs.createReadStream(source, { highWaterMark: MiB });
    file.pipe(req, { end: false });
    file.on('end', () => req.end(tail));
    file.on('error', reject);
  });
  if (res.status !== 200) throw new Error(`base: ${res.status} ${res.text}`);
  return { total: (performance.now() - t0) / 1000, complete: 0, uuid: JSON.parse(res.text).file };
}

/**
 * Seconds from an upload's answer until the CDN sends its ETag: the MD5 that a file past
 * STOWAGE_DIGEST_LATER_BYTES gets from a job after the answer (0 when it had it at the answer).
 * The next round starts only then, so no round's upload shares the CPU with the last one's digests,
 * and the server's CPU per upload below includes them.
 */
async function digestsReady(cdn, uuid) {
  const t0 = performance.now();
  for (;;) {
    const etag = await new Promise((resolve, reject) => {
      const req = http.request(`${cdn}/${uuid}/`, { method: 'HEAD', agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.headers.etag));
      });
      req.on('error', reject);
      req.end();
    });
    if (etag) return (performance.now() - t0) / 1000;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function stowageRounds(once, extraEnv = {}) {
  const dataDir = path.join(work, 'data');
  const bin = path.join(APP, 'bin', 'stowage.js');
  const env = { STOWAGE_DATA_DIR: dataDir, STOWAGE_LOG_LEVEL: 'warn', STOWAGE_RATE_UPLOAD_PER_SEC: '0', STOWAGE_RATE_UPLOAD_IP_PER_SEC: '0', ...extraEnv };
  // --max-semi-space-size=4 as every launcher passes it (bin/stowage.js says why).
  const nodeArgs = ['--max-semi-space-size=4', ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)];
  const p = await startProc(process.execPath, [...nodeArgs, bin, 'serve'], {
    env: { ...env, STOWAGE_REST_PORT: '0', STOWAGE_UPLOAD_PORT: '0', STOWAGE_CDN_PORT: '0' },
    ready: (out) => /Stowage is running/.test(out) && /Upload API:\s+\S+\n/.test(out),
  });
  try {
    const upload = /Upload API:\s+(\S+?)\/?\n/.exec(p.output())[1];
    const keys = JSON.parse(execFileSync(process.execPath, [bin, 'project', 'create', '--name', 'bench', '--json'], { env: { ...process.env, ...env }, encoding: 'utf8' }));
    const runs = [];
    const ticks0 = cpuTicks(p.pid);
    const threads0 = threadTicks(p.pid);
    const cdn = /CDN:\s+(\S+?)\/?\n/.exec(p.output())[1];
    for (let i = 0; i < ROUNDS; i++) {
      const run = await once(upload, keys.public_key);
      runs.push({ ...run, digestsAfter: await digestsReady(cdn, run.uuid) });
    }
    const cpuS = (cpuTicks(p.pid) - ticks0) / CLK_TCK / ROUNDS;
    const threads1 = threadTicks(p.pid);
    // The main thread's task id is the process id.
    const ticksOf = (t) => (t ? t.user + t.sys : 0);
    const mainS = (ticksOf(threads1.get(String(p.pid))) - ticksOf(threads0.get(String(p.pid)))) / CLK_TCK / ROUNDS;
    const threads = threadSeconds(threads0, threads1, p.pid);
    const waits = once === browserOnce ? senderWaits(new URL(upload).port) : null;
    return { ...runs.sort((a, b) => a.total - b.total)[0], cpuS, mainS, threads, peakRssMb: peakRssMb(p.pid), waits };
  } finally {
    await p.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** utime and stime ticks of every thread of the process, by thread id. */
function threadTicks(pid) {
  const out = new Map();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, { user: Number(f[11]), sys: Number(f[12]) });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/**
 * CPU per upload of each thread other than the main one, largest first, as "user+sys" seconds:
 * Node does not name its threads, but the digest thread is the one near 2-3 s per GiB, libuv's
 * pool threads (writes, fsyncs: mostly sys) and V8's helpers (garbage collection) the rest. A
 * thread that ended during the rounds is not counted.
 */
function threadSeconds(before, after, pid) {
  const rows = [];
  for (const [tid, t] of after) {
    if (tid === String(pid)) continue;
    const b = before.get(tid) ?? { user: 0, sys: 0 };
    const user = (t.user - b.user) / CLK_TCK / ROUNDS;
    const sys = (t.sys - b.sys) / CLK_TCK / ROUNDS;
    if (user + sys >= 0.05) rows.push({ user, sys });
  }
  return rows.sort((a, b) => b.user + b.sys - (a.user + a.sys)).map((r) => `${r.user.toFixed(2)}+${r.sys.toFixed(2)}`).join(', ') || 'none';
}

/** The process's peak resident set (VmHWM), MB. */
function peakRssMb(pid) {
  const kb = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return kb ? Number(kb) / 1000 : NaN;
}

/** The floor: a bare node:http server writing one request's body to a file, fsynced before it answers. */
async function floorRounds() {
  const port = await freePort();
  const dest = path.join(work, 'floor.bin');
  const server = http.createServer((req, res) => {
    const out = fs.createWriteStream(dest, { flush: true });
    req.pipe(out);
    out.on('close', () => res.end('ok'));
  });
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  try {
    const runs = [];
    for (let i = 0; i < ROUNDS; i++) {
      const t0 = performance.now();
      await new Promise((resolve, reject) => {
        const req = http.request(`http://127.0.0.1:${port}/`, { method: 'PUT', agent, headers: { 'content-length': SIZE } }, (res) => {
          res.resume();
          res.on('end', resolve);
        });
        req.on('error', reject);
        fs.createReadStream(source, { highWaterMark: MiB }).pipe(req);
      });
      runs.push((performance.now() - t0) / 1000);
    }
    return Math.min(...runs);
  } finally {
    server.close();
    fs.rmSync(dest, { force: true });
  }
}

function ddRounds() {
  const dest = path.join(work, 'dd.bin');
  const runs = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    execFileSync('dd', [`if=${source}`, `of=${dest}`, 'bs=4M', 'conv=fsync'], { stdio: 'ignore' });
    runs.push((performance.now() - t0) / 1000);
    fs.rmSync(dest, { force: true });
  }
  return Math.min(...runs);
}

const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const rate = (s) => `${(SIZE / MiB / s).toFixed(0)} MiB/s`;

console.log(`bench/uploads: ${SIZE / MiB} MiB, parts of ${PART / MiB} MiB, ${AT_ONCE} at a time, best of ${ROUNDS}; app ${APP}; load ${load()}`);
writeSource();
try {
  const dd = ddRounds();
  console.log(`dd conv=fsync           ${dd.toFixed(2)} s  ${rate(dd)}   (load ${load()})`);
  const floor = await floorRounds();
  console.log(`node:http + fsync floor ${floor.toFixed(2)} s  ${rate(floor)}   (load ${load()})`);
  const server = (mp) => `peak RSS ${mp.peakRssMb.toFixed(0)} MB (< 150 MB is the target), CPU per upload ${mp.cpuS.toFixed(2)} s (all threads), ${mp.mainS.toFixed(2)} s (main thread)`;
  const ratios = (mp) => `ratios (throughput): Stowage/floor ${(floor / mp.total).toFixed(2)}, Stowage/dd ${(dd / mp.total).toFixed(2)}, floor/dd ${(dd / floor).toFixed(2)} (target ≥ 0.8 of the floor)`;
  const digests = (r) => `MD5 (the CDN's ETag) and SHA-256 ready ${r.digestsAfter.toFixed(2)} s after the answer`;
  // The "-now" cases keep the digests before the answer (STOWAGE_DIGEST_LATER_BYTES=0), for a side-by-side.
  const NOW = { STOWAGE_DIGEST_LATER_BYTES: '0' };
  for (const [name, label, env] of [['direct', 'Stowage direct /base/  ', {}], ['direct-now', 'direct, digests first ', NOW]]) {
    if (!CASES.includes(name)) continue;
    const d = await stowageRounds(directOnce, env);
    console.log(`${label} ${d.total.toFixed(2)} s  ${rate(d.total)}   (load ${load()})`);
    console.log(`  server                ${server(d)}`);
    console.log(`  other threads (user+sys s per upload, largest first): ${d.threads}`);
    console.log(`  ${digests(d)}`);
    console.log(`  ${ratios(d)}`);
  }
  for (const [name, label, env] of [['multipart', 'Stowage multipart      ', {}], ['multipart-now', 'multipart, digests 1st ', NOW]]) {
    if (!CASES.includes(name)) continue;
    const mp = await stowageRounds(multipartOnce, env);
    console.log(`${label} ${mp.total.toFixed(2)} s  ${rate(mp.total)}   completion ${mp.complete.toFixed(2)} s   (load ${load()})`);
    console.log(`  server                ${server(mp)}`);
    console.log(`  other threads (user+sys s per upload, largest first): ${mp.threads}`);
    console.log(`  ${digests(mp)}`);
    console.log(`  ${ratios(mp)}`);
  }
  if (CASES.includes('client')) {
    const c = await stowageRounds(clientOnce);
    const st = c.steps;
    console.log(`official client uploadFile ${c.total.toFixed(2)} s  ${rate(c.total)}   (load ${load()})`);
    console.log(`  client's requests     start ${st.startS.toFixed(2)} s, parts ${st.partsS.toFixed(2)} s, completion ${st.completeS.toFixed(2)} s, ${st.infoPolls} is_ready polls (${st.afterCompleteS.toFixed(2)} s after the completion); ${st.requests} requests on ${st.sockets} sockets; the client's own CPU ${st.clientCpuS.toFixed(2)} s`);
    console.log(`  server                ${server(c)}`);
    console.log(`  other threads (user+sys s per upload, largest first): ${c.threads}`);
    console.log(`  ${digests(c)}`);
    console.log(`  ${ratios(c)}`);
  }
  const browserCases = ['browser', 'browser-floor'].filter((c) => CASES.includes(c));
  const waited = (w) => (w ? `Chromium's sockets sent for ${w.busyS.toFixed(2)} s, ${(100 * w.rwndShare).toFixed(0)} % of it waiting for the server's receive window` : 'no socket counters (needs ss)');
  if (browserCases.length && !fs.existsSync(CHROMIUM)) console.log(`official client in Chromium: skipped (needs ${CHROMIUM})`);
  else if (browserCases.length) {
    const c = CASES.includes('browser') ? await stowageRounds(browserOnce) : null;
    if (c) {
      console.log(`official client in Chromium ${c.total.toFixed(2)} s  ${rate(c.total)}   (load ${load()})`);
      console.log(`  server                ${server(c)}`);
      console.log(`  other threads (user+sys s per upload, largest first): ${c.threads}`);
      console.log(`  ${digests(c)}`);
      console.log(`  ${waited(c.waits)}`);
      console.log(`  ${ratios(c)}`);
    }
    const bf = CASES.includes('browser-floor') ? await browserFloorRounds() : null;
    if (bf) {
      console.log(`Chromium to a bare server  ${bf.total.toFixed(2)} s  ${rate(bf.total)}   (load ${load()})`);
      console.log(`  bare server           CPU per upload ${bf.cpuS.toFixed(2)} s`);
      console.log(`  ${waited(bf.waits)}`);
      console.log(`  ratios (throughput): bare/floor ${(floor / bf.total).toFixed(2)}${c ? `, Stowage/bare in Chromium ${(bf.total / c.total).toFixed(2)} (the server's share: 1.00 is none)` : ''}`);
    }
  }
} finally {
  await browserPage?.close();
  agent.destroy();
  fs.rmSync(work, { recursive: true, force: true });
}
