// `node bench/rest.mjs` (after a build; also part of `npm run bench`): a signed REST
// `GET /files/{uuid}/` against its floor, a bare Fastify route answering the same JSON. Both
// servers pinned to core 1 and wrk to core 0 (taskset); the two take turns BENCH_ROUNDS times
// and each figure is the mean. Prints req/s, p50/p99, server CPU ms per request (from /proc) and
// issue #19's targets: req/s >= 0.5x the floor, CPU <= 0.15 ms per request beyond it.
// BENCH_REST_PATH measures another read (below). SQLite by default; set STOWAGE_DATABASE_URL=postgres://… (and STOWAGE_DATABASE_SCHEMA) for PostgreSQL.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, have, startProc, wrk } from './lib.mjs';
import { snapshotApp, stowage } from './servers.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_REST_CONNECTIONS ?? 8);

if (!have('wrk') || !have('taskset')) {
  console.log('bench/rest.mjs skipped: needs wrk and taskset (Debian: apt-get install wrk util-linux)');
  process.exit(0);
}
if (os.cpus().length < 2) {
  console.log('bench/rest.mjs skipped: needs two CPUs (server on core 1, wrk on core 0)');
  process.exit(0);
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-bench-rest-'));
const dataDir = path.join(work, 'data');
const BIN = snapshotApp(work);
const keys = JSON.parse(execFileSync(process.execPath, [BIN, 'project', 'create', '--name', 'bench', '--json'], { env: { ...process.env, STOWAGE_DATA_DIR: dataDir }, encoding: 'utf8' }));
const restBase = (s) => /REST API:\s+(\S+?)\/?\n/.exec(s.output())?.[1];

/** The headers an official SDK sends for a signed GET (the Date is fresh: a 15-minute window). */
function signedHeaders(uri) {
  const type = 'application/json';
  const date = new Date().toUTCString();
  const md5 = crypto.createHash('md5').update('').digest('hex');
  const sig = crypto.createHmac('sha1', keys.secret_key).update(['GET', md5, type, date, uri].join('\n')).digest('hex');
  return { 'content-type': type, accept: 'application/vnd.uploadcare-v0.7+json', date, authorization: `Uploadcare ${keys.public_key}:${sig}` };
}

// One stored file, uploaded through a full server; the measured server serves REST only.
const uuid = await (async () => {
  const s = await stowage(dataDir);
  try {
    const form = new FormData();
    form.append('UPLOADCARE_PUB_KEY', keys.public_key);
    form.append('UPLOADCARE_STORE', '1');
    form.append('file', new Blob([crypto.randomBytes(10 * 1024)]), 'small.bin');
    const r = await fetch(`${s.upload}/base/`, { method: 'POST', body: form });
    return (await r.json()).file;
  } finally {
    await s.stop();
  }
})();
// BENCH_REST_PATH: another REST read (`{uuid}` stands for the stored file), e.g. `/files/?limit=100`;
// the bare route then answers that path's JSON at its route pattern.
const URI = (process.env.BENCH_REST_PATH ?? '/files/{uuid}/').replace('{uuid}', uuid);
const BARE_ROUTE = (process.env.BENCH_REST_PATH ?? '/files/{uuid}/').split('?')[0].replace('{uuid}', ':uuid');

console.log(`bench rest: ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), ${SECONDS}s per run, ${ROUNDS} rounds, ${CONNECTIONS} connections, ${process.env.STOWAGE_DATABASE_URL ? 'PostgreSQL' : 'SQLite'}; work dir ${work}`);
// Throttling stays on (its cost is part of every request) with a budget wrk cannot spend.
const s = await stowage(dataDir, { pin: 1, env: { STOWAGE_ONLY: 'rest', STOWAGE_RATE_REST_PER_SEC: '1000000', STOWAGE_RATE_REST_BURST: '1000000' } });
const stowageSrv = { pid: s.pid, base: restBase(s) };
const first = await fetch(stowageSrv.base + URI, { headers: signedHeaders(URI) });
if (first.status !== 200) throw new Error(`GET ${URI}: ${first.status} ${await first.text()}`);
const jsonFile = path.join(work, 'file.json');
fs.writeFileSync(jsonFile, Buffer.from(await first.arrayBuffer()));
const port = await freePort();
const bare = await startProc(process.execPath, [path.join(HERE, 'bare-rest-server.mjs'), jsonFile, String(port), BARE_ROUTE], { pin: 1, ready: (o) => o.includes('listening') });
const bareSrv = { pid: bare.pid, base: `http://127.0.0.1:${port}` };

const runs = { stowage: [], bare: [] };
try {
  for (let round = 0; round < ROUNDS; round++) {
    runs.stowage.push(await wrk({ base: stowageSrv.base, pattern: URI, headers: signedHeaders(URI), connections: CONNECTIONS, seconds: SECONDS, serverPid: stowageSrv.pid, pin: 0, dir: work }));
    runs.bare.push(await wrk({ base: bareSrv.base, pattern: URI, connections: CONNECTIONS, seconds: SECONDS, serverPid: bareSrv.pid, pin: 0, dir: work }));
  }
} finally {
  await s.stop();
  await bare.stop();
}

const mean = (list) => {
  const requests = list.reduce((a, r) => a + r.requests, 0);
  const avg = (f) => list.reduce((a, r) => a + f(r), 0) / list.length;
  const weighted = (f) => list.reduce((a, r) => a + f(r) * r.requests, 0) / requests;
  return { rps: avg((r) => r.rps), p50: avg((r) => r.p50), p99: avg((r) => r.p99), cpuMsPerReq: weighted((r) => r.cpuMsPerReq), bytesPerReq: weighted((r) => r.bytesPerReq), bad: list.reduce((a, r) => a + r.bad, 0) };
};
const R = { [`stowage signed GET ${process.env.BENCH_REST_PATH ?? '/files/{uuid}/'}`]: mean(runs.stowage), 'bare Fastify, same JSON': mean(runs.bare) };
const f = (v, d = 1) => v.toFixed(d);
console.log(`${'server'.padEnd(36)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'CPU ms/req'.padStart(11)} ${'B/resp'.padStart(7)} ${'errors'.padStart(7)}`);
for (const [k, r] of Object.entries(R)) console.log(`${k.padEnd(36)} ${f(r.rps).padStart(9)} ${f(r.p50, 2).padStart(8)} ${f(r.p99, 2).padStart(8)} ${f(r.cpuMsPerReq, 3).padStart(11)} ${f(r.bytesPerReq, 0).padStart(7)} ${String(r.bad).padStart(7)}`);
const [st, fl] = Object.values(R);
const ratio = st.rps / fl.rps;
const extra = st.cpuMsPerReq - fl.cpuMsPerReq;
console.log(`target: req/s stowage / bare ${f(ratio, 2)} (>= 0.5) ${ratio >= 0.5 ? 'MET' : 'MISSED'}`);
console.log(`target: CPU beyond bare ${f(extra, 3)} ms/req (<= 0.15) ${extra <= 0.15 ? 'MET' : 'MISSED'}`);
fs.rmSync(work, { recursive: true, force: true });
