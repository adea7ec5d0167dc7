// `npm run bench`: Stowage's CDN against ipx, sharp in-process, a bare node:http static server and
// nginx, and Stowage behind the shipped nginx front (deploy/nginx-cdn-front.conf), unpinned and
// with every server pinned to core 1 (load generator on core 0). Prints req/s, p50/p99 latency,
// server CPU ms per request and the issue's target ratios.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeFixtures } from './fixtures.mjs';
import { have, startProc, wrk } from './lib.mjs';
import { ipx, nginx, nginxFront, nodeStatic, snapshotApp, stowage } from './servers.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
if (!have('wrk') || !have('nginx', ['-v']) || !have('taskset')) {
  console.log('bench/run.mjs (CDN) skipped: needs wrk, nginx and taskset (Debian: apt-get install wrk nginx util-linux)');
  process.exit(0);
}
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
// BENCH_CDN_DELIVERY_ONLY=1 (the regression guard's short form): pinned delivery only, no resizes.
const DELIVERY_ONLY = process.env.BENCH_CDN_DELIVERY_ONLY === '1';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-bench-'));
const files = path.join(work, 'files');
fs.mkdirSync(files);
fs.chmodSync(work, 0o755); // nginx workers may run as another user
const dataDir = path.join(work, 'data');
const BIN = snapshotApp(work);

console.log(`bench: ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), ${SECONDS}s per run, work dir ${work}`);
const sizes = await makeFixtures(files);
console.log(`photo.jpg 2000x1500 ${(sizes.photo / 1024).toFixed(0)} KiB; small.bin 10 KiB; big.bin 1 MiB`);

// Upload once through the Upload API; measured runs use a CDN-only process on the same data dir.
const ids = await (async () => {
  const s = await stowage(dataDir);
  try {
    const keys = JSON.parse(execFileSync(process.execPath, [BIN, 'project', 'create', '--name', 'bench', '--json'], { env: { ...process.env, STOWAGE_DATA_DIR: dataDir }, encoding: 'utf8' }));
    const up = async (name) => {
      const form = new FormData();
      form.append('UPLOADCARE_PUB_KEY', keys.public_key);
      form.append('UPLOADCARE_STORE', '1');
      form.append('file', new Blob([fs.readFileSync(path.join(files, name))]), name);
      const r = await fetch(`${s.upload}/base/`, { method: 'POST', body: form });
      return (await r.json()).file;
    };
    return { photo: await up('photo.jpg'), small: await up('small.bin'), big: await up('big.bin') };
  } finally {
    await s.stop();
  }
})();
const CACHED = `/${ids.photo}/-/resize/460x/`; // about 10 KiB of JPEG

const results = { unpinned: {}, pinned: {} };
const MODES = DELIVERY_ONLY ? ['pinned'] : ['unpinned', 'pinned'];
for (const mode of MODES) {
  const pin = mode === 'pinned' ? 1 : null;
  const wrkPin = mode === 'pinned' ? 0 : null;
  const heavyConn = mode === 'pinned' ? 2 : 4;
  const R = results[mode];
  const load = (srv, pattern, connections) => wrk({ base: srv.base, pattern, connections, seconds: SECONDS, serverPid: srv.pid, pin: wrkPin, dir: work });
  const record = (key) => (r) => (R[key] = r);
  console.log(`\n== ${mode}${pin === null ? '' : ' (servers on core 1, wrk on core 0)'}`);

  // Uncached resize: cache off and a different width per request (so single-flight never merges).
  // Stowage, ipx and sharp in-process take turns, BENCH_ROUNDS times, and each figure is the mean
  // over the rounds: the shared second core drifts, and back-to-back turns see the same drift.
  if (!DELIVERY_ONLY) await resizeRuns(R, pin, heavyConn, load);

  // Small and large delivery.
  await deliveryRuns(R, pin, load, record);
  printTable(R);
}

async function resizeRuns(R, pin, heavyConn, load) {
  const resizer = await stowage(dataDir, { pin, env: { STOWAGE_ONLY: 'cdn', STOWAGE_CDN_CACHE_MAX_BYTES: '0', STOWAGE_CDN_MEMORY_CACHE_BYTES: '0' } });
  const peer = await ipx(files, { pin });
  const rounds = {};
  const turn = (key, run) => run().then((r) => (rounds[key] ??= []).push(r));
  for (let round = 0; round < ROUNDS; round++) {
    for (const fmt of ['jpeg', 'webp']) {
      await turn(`stowage resize ${fmt}`, () => load(resizer, `/${ids.photo}/-/resize/%dx/-/format/${fmt}/`, heavyConn));
      await turn(`ipx resize ${fmt}`, () => load(peer, `/w_%d,f_${fmt},q_80/photo.jpg`, heavyConn));
      for (const source of ['file', 'memory']) {
        const label = source === 'file' ? `sharp in-process ${fmt}` : `sharp in-process ${fmt} (memory)`;
        await turn(label, () => sharpInProcess(fmt, source, pin, heavyConn));
      }
    }
  }
  await resizer.stop();
  await peer.stop();
  for (const [key, runs] of Object.entries(rounds)) R[key] = meanOf(runs);
}

async function deliveryRuns(R, pin, load, record) {
  let s = await stowage(dataDir, { pin, env: { STOWAGE_ONLY: 'cdn' } });
  const warm = await fetch(s.base + CACHED);
  fs.writeFileSync(path.join(files, 'cached.bin'), Buffer.from(await warm.arrayBuffer()));
  await load(s, CACHED, 16).then(record('stowage cached transform'));
  await load(s, `/${ids.small}/`, 16).then(record('stowage raw 10KiB'));
  await load(s, `/${ids.big}/`, 8).then(record('stowage raw 1MiB'));
  // The same answers through the front: each warmed once (a miss), then served from its cache.
  const front = await nginxFront(s.base, work, { pin });
  for (const ref of [CACHED, `/${ids.small}/`, `/${ids.big}/`]) await fetch(front.base + ref).then((r) => r.arrayBuffer());
  await load(front, CACHED, 16).then(record('front cached transform'));
  await load(front, `/${ids.small}/`, 16).then(record('front raw 10KiB'));
  await load(front, `/${ids.big}/`, 8).then(record('front raw 1MiB'));
  await front.stop();
  await s.stop();
  for (const [name, start] of [['node:http', () => nodeStatic(files, { pin })], ['nginx', () => nginx(files, work, { pin })]]) {
    s = await start();
    await load(s, '/cached.bin', 16).then(record(`${name} cached-size file`));
    await load(s, '/small.bin', 16).then(record(`${name} 10KiB`));
    await load(s, '/big.bin', 8).then(record(`${name} 1MiB`));
    await s.stop();
  }
  // Context, not a floor: static nginx with the front's own file-serving settings.
  s = await nginx(files, work, { pin, tuned: true });
  await load(s, '/cached.bin', 16).then(record('nginx tuned cached-size file'));
  await load(s, '/small.bin', 16).then(record('nginx tuned 10KiB'));
  await s.stop();
}
console.log(`\ncached transform body: ${fs.statSync(path.join(files, 'cached.bin')).size} bytes (${CACHED.split('/-/').slice(1).join(' ')})`);
printTargets(results);
fs.writeFileSync(path.join(work, 'results.json'), JSON.stringify(results, null, 2));
console.log(`\nraw results: ${path.join(work, 'results.json')}`);

/** sharp's own throughput on the photo, reading it from the file or from a buffer each time. */
async function sharpInProcess(fmt, source, pin, inflight) {
  const args = [path.join(HERE, 'sharp-inprocess.mjs'), path.join(files, 'photo.jpg'), fmt, String(SECONDS), String(inflight), source];
  const p = await startProc(process.execPath, args, { pin, ready: (o) => o.includes('}\n'), timeoutMs: 120_000 });
  await p.stop();
  return { ...JSON.parse(p.output().trim().split('\n').pop()), p50: NaN, p99: NaN, bad: 0 };
}

/** Mean of several runs of one scenario (CPU per request weighted by requests). */
function meanOf(runs) {
  const mean = (f) => runs.reduce((a, r) => a + f(r), 0) / runs.length;
  const requests = runs.reduce((a, r) => a + r.requests, 0);
  return {
    rps: mean((r) => r.rps),
    p50: mean((r) => r.p50),
    p99: mean((r) => r.p99),
    cpuMsPerReq: runs.reduce((a, r) => a + r.cpuMsPerReq * r.requests, 0) / requests,
    requests,
    bytesPerReq: runs.reduce((a, r) => a + r.bytesPerReq * r.requests, 0) / requests,
    bad: runs.reduce((a, r) => a + r.bad, 0),
  };
}

function printTable(R) {
  const f = (v, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : '-');
  console.log(`${'server / scenario'.padEnd(32)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'CPU ms/req'.padStart(11)} ${'KiB/resp'.padStart(9)} ${'errors'.padStart(7)}`);
  for (const [k, r] of Object.entries(R)) console.log(`${k.padEnd(32)} ${f(r.rps).padStart(9)} ${f(r.p50, 2).padStart(8)} ${f(r.p99, 2).padStart(8)} ${f(r.cpuMsPerReq, 3).padStart(11)} ${f(r.bytesPerReq / 1024, 2).padStart(9)} ${String(r.bad).padStart(7)}`);
}

function printTargets(results) {
  console.log('\n== targets');
  const line = (label, value, op, target) => {
    const ok = op === '<=' ? value <= target : value >= target;
    console.log(`${label.padEnd(64)} ${value.toFixed(2).padStart(6)}  (target ${op} ${target})  ${ok ? 'MET' : 'MISSED'}`);
  };
  for (const mode of ['pinned', 'unpinned'].filter((m) => MODES.includes(m))) {
    const R = results[mode];
    for (const fmt of DELIVERY_ONLY ? [] : ['jpeg', 'webp']) {
      line(`[${mode}] resize ${fmt}: CPU/image stowage / sharp in-process`, R[`stowage resize ${fmt}`].cpuMsPerReq / R[`sharp in-process ${fmt}`].cpuMsPerReq, '<=', 1.1);
      line(`[${mode}] resize ${fmt}: req/s stowage / ipx`, R[`stowage resize ${fmt}`].rps / R[`ipx resize ${fmt}`].rps, '>=', 1.15);
      const ceiling = R[`sharp in-process ${fmt} (memory)`].rps / R[`ipx resize ${fmt}`].rps;
      console.log(`${`[${mode}]   context: req/s sharp in-process from memory / ipx`.padEnd(64)} ${ceiling.toFixed(2).padStart(6)}  (sharp alone, no HTTP: the practical ceiling)`);
    }
    line(`[${mode}] cached transform: CPU/req stowage / node:http`, R['stowage cached transform'].cpuMsPerReq / R['node:http cached-size file'].cpuMsPerReq, '<=', 1.2);
    line(`[${mode}] raw 10 KiB: CPU/req stowage / node:http`, R['stowage raw 10KiB'].cpuMsPerReq / R['node:http 10KiB'].cpuMsPerReq, '<=', 1.2);
    line(`[${mode}] raw 1 MiB: req/s stowage / nginx`, R['stowage raw 1MiB'].rps / R['nginx 1MiB'].rps, '>=', 0.9);
    line(`[${mode}] cached transform: req/s nginx front / nginx static`, R['front cached transform'].rps / R['nginx cached-size file'].rps, '>=', 0.8);
    line(`[${mode}] raw 10 KiB: req/s nginx front / nginx static`, R['front raw 10KiB'].rps / R['nginx 10KiB'].rps, '>=', 0.8);
    for (const [label, front, file] of [['cached transform', 'front cached transform', 'cached-size file'], ['raw 10 KiB', 'front raw 10KiB', '10KiB']]) {
      const ratio = R[front].rps / R[`nginx tuned ${file}`].rps;
      console.log(`${`[${mode}]   context: ${label}: front / nginx tuned alike`.padEnd(64)} ${ratio.toFixed(2).padStart(6)}  (static nginx with the front's open_file_cache and tcp_nopush off)`);
    }
    line(`[${mode}] cached transform: req/s stowage alone / node:http`, R['stowage cached transform'].rps / R['node:http cached-size file'].rps, '>=', 2);
    line(`[${mode}] raw 10 KiB: req/s stowage alone / node:http`, R['stowage raw 10KiB'].rps / R['node:http 10KiB'].rps, '>=', 2);
  }
}
