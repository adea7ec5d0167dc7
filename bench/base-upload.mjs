// `node bench/base-upload.mjs` (after a build; also part of `npm run bench`): small direct uploads,
// `POST /base/` of a 64 KiB file stored at once (UPLOADCARE_STORE=1), against its floor: a bare
// Fastify route writing the part to a temp file, fsync, rename and one committed SQLite row
// (bench/bare-upload-server.mjs). Both servers pinned to core 1 and wrk to core 0; they take turns
// BENCH_ROUNDS times. Prints req/s, p50/p99, server CPU ms per request and issue #19's item 2
// target (>= 0.6x the floor's req/s). Then the "many clients" case: both servers let onto both
// cores (taskset -a -p), wrk unpinned with BENCH_UPLOAD_MANY_CONNECTIONS (default 64) connections,
// uploads/s of each and issue #19's ">= 1,000 small uploads/s on two cores" target.
// SQLite by default; STOWAGE_DATABASE_URL=postgres://… for PostgreSQL.
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
// A new upload runs more code than a read: after 1 s (about 150 uploads) V8 was still compiling it,
// and a server's CPU per upload fell 6.1 -> 3.7 ms over its first 20 s (docs/performance.md).
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_UPLOAD_CONNECTIONS ?? 8);
const SIZE = Number(process.env.BENCH_UPLOAD_BYTES ?? 64 * 1024);
const MANY = Number(process.env.BENCH_UPLOAD_MANY_CONNECTIONS ?? 64);

if (!have('wrk') || !have('taskset')) {
  console.log('bench/base-upload.mjs skipped: needs wrk and taskset (Debian: apt-get install wrk util-linux)');
  process.exit(0);
}
if (os.cpus().length < 2) {
  console.log('bench/base-upload.mjs skipped: needs two CPUs (server on core 1, wrk on core 0)');
  process.exit(0);
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-bench-upload-'));
const dataDir = path.join(work, 'data');
const BIN = snapshotApp(work);
const keys = JSON.parse(execFileSync(process.execPath, [BIN, 'project', 'create', '--name', 'bench', '--json'], { env: { ...process.env, STOWAGE_DATA_DIR: dataDir }, encoding: 'utf8' }));

// One multipart body; wrk writes its request counter over MARK, so every upload has its own bytes
// (equal bytes would be deduplicated: a different path from a first upload).
const MARK = 'UNIQUEUNIQUEUNIQ';
const BOUNDARY = '----stowagebench' + crypto.randomBytes(8).toString('hex');
const field = (name, value) => `--${BOUNDARY}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const body = Buffer.concat([
  Buffer.from(field('UPLOADCARE_PUB_KEY', keys.public_key) + field('UPLOADCARE_STORE', '1')),
  Buffer.from(`--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="small.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`),
  Buffer.from(MARK),
  crypto.randomBytes(SIZE - MARK.length),
  Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
]);
const bodyFile = path.join(work, 'body.bin');
fs.writeFileSync(bodyFile, body);
const headers = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };

console.log(`bench base-upload: ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), ${SIZE} B files, ${SECONDS}s per run, ${ROUNDS} rounds, ${CONNECTIONS} connections, ${process.env.STOWAGE_DATABASE_URL ? 'PostgreSQL' : 'SQLite'}; load average ${os.loadavg()[0].toFixed(1)}; work dir ${work}`);
// Throttling stays on (its cost is part of every request) with a budget wrk cannot spend.
const s = await stowage(dataDir, { pin: 1, env: { STOWAGE_ONLY: 'upload', STOWAGE_RATE_UPLOAD_PER_SEC: '1000000', STOWAGE_RATE_UPLOAD_BURST: '1000000', STOWAGE_RATE_UPLOAD_IP_PER_SEC: '1000000', STOWAGE_RATE_UPLOAD_IP_BURST: '1000000' } });
const first = await fetch(`${s.upload}/base/`, { method: 'POST', headers, body });
if (first.status !== 200) throw new Error(`POST /base/: ${first.status} ${await first.text()}`);
const port = await freePort();
const floorDir = path.join(work, 'floor');
const bare = await startProc(process.execPath, [path.join(HERE, 'bare-upload-server.mjs'), floorDir, String(port)], { pin: 1, ready: (o) => o.includes('listening') });

const runs = { stowage: [], bare: [] };
const many = { stowage: [], bare: [] };
try {
  for (let round = 0; round < ROUNDS; round++) {
    runs.stowage.push(await wrk({ base: s.upload, pattern: '/base/', method: 'POST', bodyFile, uniqueMark: MARK, headers, connections: CONNECTIONS, seconds: SECONDS, serverPid: s.pid, pin: 0, dir: work, warmupSeconds: WARMUP }));
    runs.bare.push(await wrk({ base: `http://127.0.0.1:${port}`, pattern: '/base/', method: 'POST', bodyFile, uniqueMark: MARK, headers, connections: CONNECTIONS, seconds: SECONDS, serverPid: bare.pid, pin: 0, dir: work, warmupSeconds: WARMUP }));
  }
  // Many clients on two cores: every thread of both servers may now run on either core.
  for (const pid of [s.pid, bare.pid]) execFileSync('taskset', ['-a', '-p', '-c', '0,1', String(pid)], { stdio: 'ignore' });
  for (let round = 0; round < ROUNDS; round++) {
    many.stowage.push(await wrk({ base: s.upload, pattern: '/base/', method: 'POST', bodyFile, uniqueMark: MARK, headers, connections: MANY, seconds: SECONDS, serverPid: s.pid, dir: work, warmupSeconds: WARMUP }));
    many.bare.push(await wrk({ base: `http://127.0.0.1:${port}`, pattern: '/base/', method: 'POST', bodyFile, uniqueMark: MARK, headers, connections: MANY, seconds: SECONDS, serverPid: bare.pid, dir: work, warmupSeconds: WARMUP }));
  }
} finally {
  await s.stop();
  await bare.stop();
}

const mean = (list) => {
  const requests = list.reduce((a, r) => a + r.requests, 0);
  const avg = (f) => list.reduce((a, r) => a + f(r), 0) / list.length;
  const weighted = (f) => list.reduce((a, r) => a + f(r) * r.requests, 0) / requests;
  return { rps: avg((r) => r.rps), p50: avg((r) => r.p50), p99: avg((r) => r.p99), cpuMsPerReq: weighted((r) => r.cpuMsPerReq), mainMsPerReq: weighted((r) => r.mainMsPerReq), bad: list.reduce((a, r) => a + r.bad, 0) };
};
const R = {
  [`stowage POST /base/ (stored), 1 core, ${CONNECTIONS} conn`]: mean(runs.stowage),
  [`bare durable write (floor), 1 core, ${CONNECTIONS} conn`]: mean(runs.bare),
  [`stowage, 2 cores, ${MANY} conn`]: mean(many.stowage),
  [`floor, 2 cores, ${MANY} conn`]: mean(many.bare),
};
const f = (v, d = 1) => v.toFixed(d);
console.log(`${'server'.padEnd(46)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'CPU ms/req'.padStart(11)} ${'main thread'.padStart(12)} ${'errors'.padStart(7)}`);
for (const [k, r] of Object.entries(R)) console.log(`${k.padEnd(46)} ${f(r.rps).padStart(9)} ${f(r.p50, 2).padStart(8)} ${f(r.p99, 2).padStart(8)} ${f(r.cpuMsPerReq, 3).padStart(11)} ${f(r.mainMsPerReq, 3).padStart(12)} ${String(r.bad).padStart(7)}`);
const [st, fl, mst, mfl] = Object.values(R);
// The main thread's busy share on two cores: near 100 % means the event loop is what bounds uploads/s there.
console.log(`main thread busy on two cores: stowage ${f((mst.mainMsPerReq * mst.rps) / 10, 0)} %, floor ${f((mfl.mainMsPerReq * mfl.rps) / 10, 0)} %`);
const ratio = st.rps / fl.rps;
console.log(`target: req/s stowage / floor ${f(ratio, 2)} (>= 0.6) ${ratio >= 0.6 ? 'MET' : 'MISSED'}`);
console.log(`target: many clients on two cores ${f(mst.rps, 0)} uploads/s (>= 1,000) ${mst.rps >= 1000 ? 'MET' : 'MISSED'}; against the floor unpinned ${f(mst.rps / mfl.rps, 2)}x`);
fs.rmSync(work, { recursive: true, force: true });
