// `node bench/s3.mjs` (after a build; also part of `npm run bench`): the S3 surface against the
// other ways to the same files, side by side in one run.
// 1. Upload: aws-cli `s3 cp` of a BENCH_S3_UPLOAD_BYTES (256 MiB) file to the S3 endpoint against
//    `curl -F` of the same size to `/base/`, taking turns BENCH_S3_ROUNDS times (each upload its own
//    bytes: equal ones would be deduplicated). Wall seconds, MiB/s and the server's CPU seconds;
//    target: aws-cli's throughput at least 0.8x the direct upload's. Beside it, not the target: an
//    aws-cli cp of 1 KiB each round (its start-up and exit, paid by every invocation) and the large
//    upload's throughput without that time, and the same aws-cli command against an S3 endpoint
//    that does nothing (s3-sink-server.mjs): aws-cli's own time, the most any server could reach
//    with it. Skipped without aws or curl.
// 2. Small reads: GetObject of a 10 KiB object (a presigned URL, so wrk can repeat it: the
//    signature is checked on every request) against the CDN's raw delivery of the same file, server
//    pinned to core 1 and wrk to core 0; server CPU ms per request, target: within 1.2x. Skipped
//    without wrk and taskset.
// 3. Listing: ListObjectsV2 pages at BENCH_S3_LIST_SMALL (10 k) and BENCH_S3_LIST_LARGE (1 M) files,
//    rows cloned by SQL from one uploaded file before the servers start (9 in 10 with a key
//    `data/<n>.bin`, the others unkeyed), p50 of BENCH_S3_LIST_REPEAT signed requests alternating
//    between the two stores; target: within 1.2x at the large size.
// SQLite by default; STOWAGE_DATABASE_URL=postgres://… for PostgreSQL (a schema per store).
// BENCH_S3_ONLY=upload,get,list runs some parts only. Prints a block to paste at the end.
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { cpuTicks, CLK_TCK, have, wrk } from './lib.mjs';
import { s3Sink, snapshotApp, stowage } from './servers.mjs';

const UPLOAD_BYTES = Number(process.env.BENCH_S3_UPLOAD_BYTES ?? 256 * 1024 ** 2);
const ROUNDS = Number(process.env.BENCH_S3_ROUNDS ?? 2);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const SMALL = Number(process.env.BENCH_S3_LIST_SMALL ?? 10_000);
const LARGE = Number(process.env.BENCH_S3_LIST_LARGE ?? 1_000_000);
const REPEAT = Number(process.env.BENCH_S3_LIST_REPEAT ?? 40);
const ONLY = (process.env.BENCH_S3_ONLY ?? 'upload,get,list').split(',');
const PG_URL = process.env.STOWAGE_DATABASE_URL ?? '';
const pg = /^postgres/.test(PG_URL);
const pinned = have('taskset') && os.cpus().length > 1;
const load = () => os.loadavg()[0].toFixed(1);
const f = (v, d = 2) => (Number.isFinite(v) ? v.toFixed(d) : 'n/a');
const summary = [];

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-bench-s3-'));
const BIN = snapshotApp(work);
// Throttling stays on (its cost is part of every request) with a budget the bench cannot spend.
const UNTHROTTLED = { STOWAGE_RATE_UPLOAD_PER_SEC: '1000000', STOWAGE_RATE_UPLOAD_BURST: '1000000', STOWAGE_RATE_UPLOAD_IP_PER_SEC: '1000000', STOWAGE_RATE_UPLOAD_IP_BURST: '1000000' };
const s3Base = (s) => /S3 API:\s+(\S+?)\/?\n/.exec(s.output())?.[1];

/** A store (data dir, and a schema on PostgreSQL) with one project. */
function newStore(label) {
  const dataDir = path.join(work, label);
  const schema = pg ? `bench_s3_${label}_${crypto.randomBytes(3).toString('hex')}` : undefined;
  const env = { ...(schema ? { STOWAGE_DATABASE_SCHEMA: schema } : {}) };
  const keys = JSON.parse(execFileSync(process.execPath, [BIN, 'project', 'create', '--name', 'bench', '--json'], { env: { ...process.env, STOWAGE_DATA_DIR: dataDir, ...env }, encoding: 'utf8' }));
  return { label, dataDir, schema, env, keys };
}

const startS3 = (st, pin = null) => stowage(st.dataDir, { pin, env: { STOWAGE_ONLY: 'upload,cdn,s3', STOWAGE_S3_API_PORT: '0', ...UNTHROTTLED, ...st.env } });
const s3Client = (s, keys) => new S3Client({ endpoint: s3Base(s), region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: keys.public_key, secretAccessKey: keys.secret_key } });

async function uploadBase(s, keys, bytes, name) {
  const form = new FormData();
  form.append('UPLOADCARE_PUB_KEY', keys.public_key);
  form.append('UPLOADCARE_STORE', '1');
  form.append('file', new Blob([bytes]), name);
  const r = await fetch(`${s.upload}/base/`, { method: 'POST', body: form });
  if (r.status !== 200) throw new Error(`POST /base/: ${r.status} ${await r.text()}`);
  return (await r.json()).file;
}

/** Runs a command (pinned to core 0 when possible); resolves with its wall seconds and the server's CPU seconds meanwhile. */
function timed(cmd, args, env, serverPid) {
  const full = pinned ? ['taskset', '-c', '0', cmd, ...args] : [cmd, ...args];
  const cpu = cpuTicks(serverPid);
  const t = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const c = spawn(full[0], full.slice(1), { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (out += d));
    c.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`${cmd} exited ${code}:\n${out}`));
      resolve({ seconds: Number(process.hrtime.bigint() - t) / 1e9, cpu: (cpuTicks(serverPid) - cpu) / CLK_TCK, out });
    });
  });
}

async function benchUpload() {
  if (!have('aws', ['--version']) || !have('curl')) return console.log('upload: skipped (needs aws-cli and curl)');
  const st = newStore('upload');
  const file = path.join(work, 'big.bin');
  fs.writeFileSync(file, crypto.randomBytes(UPLOAD_BYTES));
  const fd = fs.openSync(file, 'r+');
  // Each upload its own bytes: the first 16 are rewritten before it.
  const makeUnique = () => fs.writeSync(fd, crypto.randomBytes(16), 0, 16, 0);
  const tiny = path.join(work, 'tiny.bin');
  fs.writeFileSync(tiny, crypto.randomBytes(1024));
  const awsEnv = { AWS_ACCESS_KEY_ID: st.keys.public_key, AWS_SECRET_ACCESS_KEY: st.keys.secret_key, AWS_DEFAULT_REGION: 'us-east-1', AWS_CONFIG_FILE: path.join(work, 'none'), AWS_SHARED_CREDENTIALS_FILE: path.join(work, 'none'), AWS_EC2_METADATA_DISABLED: 'true' };
  const s = await startS3(st, pinned ? 1 : null);
  const sink = await s3Sink({ pin: pinned ? 1 : null });
  const runs = { aws: [], awsTiny: [], curl: [], sink: [] };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      makeUnique();
      runs.aws.push(await timed('aws', ['--endpoint-url', s3Base(s), 's3', 'cp', '--only-show-errors', file, `s3://${st.keys.public_key}/bench/big-${round}.bin`], awsEnv, s.pid));
      // aws-cli's own start-up and exit, which every invocation pays whatever it sends.
      runs.awsTiny.push(await timed('aws', ['--endpoint-url', s3Base(s), 's3', 'cp', '--only-show-errors', tiny, `s3://${st.keys.public_key}/bench/tiny-${round}.bin`], awsEnv, s.pid));
      makeUnique();
      const curl = await timed('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '-F', `UPLOADCARE_PUB_KEY=${st.keys.public_key}`, '-F', 'UPLOADCARE_STORE=1', '-F', `file=@${file}`, `${s.upload}/base/`], {}, s.pid);
      if (curl.out.trim() !== '200') throw new Error(`curl /base/: ${curl.out}`);
      runs.curl.push(curl);
      // The same aws-cli command against an endpoint that does nothing: aws-cli's own time.
      runs.sink.push(await timed('aws', ['--endpoint-url', sink.base, 's3', 'cp', '--only-show-errors', file, `s3://${st.keys.public_key}/bench/big-${round}.bin`], awsEnv, sink.pid));
    }
  } finally {
    fs.closeSync(fd);
    await s.stop();
    await sink.stop();
  }
  const mean = (list, k) => list.reduce((a, r) => a + r[k], 0) / list.length;
  const mib = UPLOAD_BYTES / 1024 ** 2;
  const row = (name, list) => `${name.padEnd(34)} ${f(mean(list, 'seconds')).padStart(8)} ${f(mib / mean(list, 'seconds'), 1).padStart(8)} ${f(mean(list, 'cpu')).padStart(10)}`;
  console.log(`upload of ${mib} MiB, mean of ${ROUNDS} (taking turns)   wall s    MiB/s  server CPU s`);
  console.log(row('aws-cli s3 cp (S3 multipart)', runs.aws));
  console.log(row('curl -F /base/', runs.curl));
  console.log(row('aws-cli s3 cp to a do-nothing S3', runs.sink));
  console.log(`${'aws-cli s3 cp of 1 KiB (start-up)'.padEnd(34)} ${f(mean(runs.awsTiny, 'seconds')).padStart(8)} ${''.padStart(8)} ${f(mean(runs.awsTiny, 'cpu')).padStart(10)}`);
  const ratio = mean(runs.curl, 'seconds') / mean(runs.aws, 'seconds');
  summary.push(`upload ${mib} MiB: aws-cli ${f(mib / mean(runs.aws, 'seconds'), 1)} MiB/s, /base/ ${f(mib / mean(runs.curl, 'seconds'), 1)} MiB/s, ratio ${f(ratio)}x (>= 0.8) ${ratio >= 0.8 ? 'MET' : 'MISSED'}`);
  // Beside the target: the same upload without aws-cli's start-up and exit (a 1 KiB cp's wall time).
  const transfer = mean(runs.aws, 'seconds') - mean(runs.awsTiny, 'seconds');
  // The client's ceiling: aws-cli against an endpoint that does nothing; no server can beat it.
  const ceiling = mean(runs.curl, 'seconds') / mean(runs.sink, 'seconds');
  summary.push(`  aws-cli to a do-nothing S3 endpoint: ${f(mib / mean(runs.sink, 'seconds'), 1)} MiB/s, ${f(ceiling)}x /base/ (the most any server can reach with this client); Stowage reaches ${f(ratio / ceiling)} of it`);
  summary.push(`  aws-cli start-up and exit ${f(mean(runs.awsTiny, 'seconds'))} s (a 1 KiB cp); the ${mib} MiB less that: ${f(mib / transfer, 1)} MiB/s, ${f(mean(runs.curl, 'seconds') / transfer)}x /base/ (not the target)`);
}

async function benchGet() {
  if (!have('wrk') || !pinned) return console.log('get: skipped (needs wrk, taskset and two CPUs)');
  const st = newStore('get');
  const s = await startS3(st, 1);
  let r;
  try {
    const uuid = await uploadBase(s, st.keys, crypto.randomBytes(10 * 1024), 'small.bin');
    // A file uploaded to /base/ is the object `<uuid>/<original filename>`.
    const url = new URL(await getSignedUrl(s3Client(s, st.keys), new GetObjectCommand({ Bucket: st.keys.public_key, Key: `${uuid}/small.bin` }), { expiresIn: 3600 }));
    const check = await fetch(url);
    if (check.status !== 200) throw new Error(`GetObject: ${check.status} ${await check.text()}`);
    const get = (base, pattern) => wrk({ base, pattern, connections: 8, seconds: SECONDS, serverPid: s.pid, pin: 0, dir: work });
    r = { s3: [], cdn: [] };
    for (let round = 0; round < ROUNDS; round++) {
      r.s3.push(await get(url.origin, url.pathname + url.search));
      r.cdn.push(await get(s.base, `/${uuid}/`));
    }
  } finally {
    await s.stop();
  }
  const mean = (list, k) => list.reduce((a, x) => a + x[k], 0) / list.length;
  console.log(`10 KiB reads, 1 core, 8 conn, mean of ${ROUNDS}   req/s  CPU ms/req  p99 ms  errors`);
  for (const [name, list] of [['GetObject (presigned)', r.s3], ['CDN raw delivery', r.cdn]]) {
    console.log(`${name.padEnd(40)} ${f(mean(list, 'rps'), 0).padStart(7)} ${f(mean(list, 'cpuMsPerReq'), 3).padStart(11)} ${f(mean(list, 'p99')).padStart(7)} ${String(list.reduce((a, x) => a + x.bad, 0)).padStart(7)}`);
  }
  const ratio = mean(r.s3, 'cpuMsPerReq') / mean(r.cdn, 'cpuMsPerReq');
  summary.push(`GetObject 10 KiB: ${f(mean(r.s3, 'cpuMsPerReq'), 3)} CPU ms/req against the CDN's ${f(mean(r.cdn, 'cpuMsPerReq'), 3)}, ratio ${f(ratio)}x (<= 1.2) ${ratio <= 1.2 ? 'MET' : 'MISSED'}`);
}

/** The store, straight: better-sqlite3 on the data dir's file, or pg in the store's schema. */
async function openDb(st) {
  if (pg) {
    const { default: Pg } = await import('pg');
    const client = new Pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`set search_path to ${st.schema}`);
    return { run: async (text) => (await client.query(text)).rows, close: () => client.end() };
  }
  const { default: SQLite } = await import('better-sqlite3');
  const db = new SQLite(path.join(st.dataDir, 'stowage.sqlite'));
  db.pragma('journal_mode = WAL');
  return { run: async (text) => { const q = db.prepare(text); return q.reader ? q.all() : (q.run(), []); }, close: async () => db.close() };
}

const series = (n) => (pg ? `generate_series(0, ${n - 1}) as n(i)` : `(with recursive n(i) as (select 0 union all select i + 1 from n where i < ${n - 1}) select i from n) as n`);
const hex = (expr, width) => (pg ? `lpad(to_hex(${expr}), ${width}, '0')` : `printf('%0${width}x', ${expr})`);
const padded = (expr) => (pg ? `lpad(${expr}::text, 8, '0')` : `printf('%08d', ${expr})`);

/** A store whose project has `n` files: one uploaded, the rest its clones (9 in 10 keyed). */
async function listStore(label, n) {
  const t = Date.now();
  const st = newStore(label);
  const s = await startS3(st);
  const template = await uploadBase(s, st.keys, crypto.randomBytes(1024), 'template.bin').finally(() => s.stop());
  const db = await openDb(st);
  const [{ uploaded_us: us0 }] = await db.run(`select uploaded_us from files where uuid = '${template}'`);
  await db.run(`insert into files (uuid, project_id, uploaded_us, stored_us, size, mime_type, original_filename, filename, is_image, is_ready, content_info, metadata, appdata, blob_key, md5, source_url, tags, detected_mime, object_key)
    select ${hex('n.i', 8)} || '-0000-4000-8000-' || ${hex('n.i', 12)}, f.project_id, ${Number(us0) - (n + 10) * 10} + n.i * 10, f.stored_us, f.size, f.mime_type, f.original_filename, f.filename, f.is_image, f.is_ready, f.content_info, f.metadata, f.appdata, f.blob_key, f.md5, f.source_url, f.tags, f.detected_mime,
      case when n.i % 10 = 9 then null else 'data/' || ${padded('n.i')} || '.bin' end
    from files f, ${series(n - 1)} where f.uuid = '${template}'`);
  if (pg) await db.run('analyze');
  await db.close();
  console.log(`list store ${label}: ${n} files in ${((Date.now() - t) / 1000).toFixed(1)} s; load ${load()}`);
  return st;
}

async function benchList() {
  const stores = [await listStore('small', SMALL), await listStore('large', LARGE)];
  const servers = [];
  const times = {};
  try {
    for (const st of stores) {
      const s = await startS3(st, pinned ? 1 : null);
      servers.push({ s, st, client: s3Client(s, st.keys) });
    }
    const cases = (n) => ({
      'first page (1000 keys)': {},
      'deep page (start-after 90 %)': { StartAfter: `data/${String(Math.floor(n * 0.9)).padStart(8, '0')}.bin` },
      'delimiter / at the root': { Delimiter: '/' },
      'prefix data/00001, 100 keys': { Prefix: 'data/00001', MaxKeys: 100 },
    });
    for (const name of Object.keys(cases(1))) {
      for (let i = 0; i < REPEAT + 3; i++) {
        for (const { st, client } of servers) {
          const n = st.label === 'small' ? SMALL : LARGE;
          const t = process.hrtime.bigint();
          await client.send(new ListObjectsV2Command({ Bucket: st.keys.public_key, ...cases(n)[name] }));
          if (i >= 3) ((times[name] ??= { small: [], large: [] })[st.label]).push(Number(process.hrtime.bigint() - t) / 1e6);
        }
      }
    }
  } finally {
    for (const { s } of servers) await s.stop();
    if (pg) for (const st of stores) { const db = await openDb(st); await db.run(`drop schema ${st.schema} cascade`); await db.close(); }
  }
  const p50 = (list) => list.sort((a, b) => a - b)[Math.floor(list.length / 2)];
  console.log(`${'ListObjectsV2'.padEnd(30)} ${`p50 ms @${SMALL}`.padStart(14)} ${`p50 ms @${LARGE}`.padStart(16)} ${'ratio'.padStart(6)}`);
  let worst = 0;
  for (const [name, t] of Object.entries(times)) {
    const ratio = p50(t.large) / p50(t.small);
    worst = Math.max(worst, ratio);
    console.log(`${name.padEnd(30)} ${f(p50(t.small)).padStart(14)} ${f(p50(t.large)).padStart(16)} ${f(ratio).padStart(6)}`);
  }
  summary.push(`ListObjectsV2 page at ${LARGE} against ${SMALL} files: worst ratio ${f(worst)}x (<= 1.2) ${worst <= 1.2 ? 'MET' : 'MISSED'}`);
}

console.log(`bench s3: ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), ${pg ? 'PostgreSQL' : 'SQLite'}; load average ${load()}; work dir ${work}`);
try {
  if (ONLY.includes('upload')) await benchUpload();
  if (ONLY.includes('get')) await benchGet();
  if (ONLY.includes('list')) await benchList();
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
console.log(`\n--- s3 bench summary (${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} CPUs, ${pg ? 'PostgreSQL' : 'SQLite'}, load ${load()}) ---`);
for (const line of summary) console.log(line);
