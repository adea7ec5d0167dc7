// `node bench/lists.mjs` (after a build; also part of `npm run bench`): list pages at 10 k and at
// 1 M files (issue #19 item 3: page latency at 1 M within 1.2x of that at 10 k). One project; one
// uploaded file and one group are cloned by SQL (INSERT … SELECT) to BENCH_LISTS_SMALL and then to
// BENCH_LISTS_LARGE rows (70 % stored, 20 % unstored, 10 % removed; 1 % tagged `bench`), and
// signed GETs of the file and group lists are timed one after another (p50 of BENCH_LISTS_REPEAT),
// each answer with its `total` / `totals`: the first page of each filter, a deep cursor page, the
// newest-first page, a tag-filtered page (counted: shown, not held to the target) and the groups.
// SQLite by default; STOWAGE_DATABASE_URL=postgres://… runs it on PostgreSQL in a schema of its own.
// The measured server serves REST only, pinned to core 1 when taskset is there.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { have } from './lib.mjs';
import { snapshotApp, stowage } from './servers.mjs';

const SMALL = Number(process.env.BENCH_LISTS_SMALL ?? 10_000);
const LARGE = Number(process.env.BENCH_LISTS_LARGE ?? 1_000_000);
const REPEAT = Number(process.env.BENCH_LISTS_REPEAT ?? 40);
const TARGET = 1.2;
const PG_URL = process.env.STOWAGE_DATABASE_URL ?? '';
const pg = /^postgres/.test(PG_URL);
const schema = pg ? `bench_lists_${crypto.randomBytes(4).toString('hex')}` : undefined;

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-bench-lists-'));
const dataDir = path.join(work, 'data');
const BIN = snapshotApp(work);
const env = { ...process.env, STOWAGE_DATA_DIR: dataDir, ...(schema ? { STOWAGE_DATABASE_SCHEMA: schema } : {}) };
const keys = JSON.parse(execFileSync(process.execPath, [BIN, 'project', 'create', '--name', 'bench', '--json'], { env, encoding: 'utf8' }));
const restBase = (s) => /REST API:\s+(\S+?)\/?\n/.exec(s.output())?.[1];
const pin = have('taskset') && os.cpus().length > 1 ? 1 : null;

function signedHeaders(uri) {
  const type = 'application/json';
  const date = new Date().toUTCString();
  const md5 = crypto.createHash('md5').update('').digest('hex');
  const sig = crypto.createHmac('sha1', keys.secret_key).update(['GET', md5, type, date, uri].join('\n')).digest('hex');
  return { 'content-type': type, accept: 'application/vnd.uploadcare-v0.7+json', date, authorization: `Uploadcare ${keys.public_key}:${sig}` };
}

// The template file and group, through a full server.
const template = await (async () => {
  const s = await stowage(dataDir, { env: schema ? { STOWAGE_DATABASE_SCHEMA: schema } : {} });
  try {
    const form = new FormData();
    form.append('UPLOADCARE_PUB_KEY', keys.public_key);
    form.append('UPLOADCARE_STORE', '1');
    form.append('file', new Blob([crypto.randomBytes(1024)]), 'template.bin');
    const file = (await (await fetch(`${s.upload}/base/`, { method: 'POST', body: form })).json()).file;
    const g = new FormData();
    g.append('pub_key', keys.public_key);
    g.append('files[]', file);
    const group = (await (await fetch(`${s.upload}/group/`, { method: 'POST', body: g })).json()).id.split('~')[0];
    return { file, group };
  } finally {
    await s.stop();
  }
})();

/** The store, straight: better-sqlite3 on the data dir's file, or pg in the bench's schema. */
async function openStore() {
  if (pg) {
    const { default: Pg } = await import('pg');
    const client = new Pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`set search_path to ${schema}`);
    return { run: async (text) => (await client.query(text)).rows, close: () => client.end() };
  }
  const { default: SQLite } = await import('better-sqlite3');
  const file = new SQLite(path.join(dataDir, 'stowage.sqlite'));
  file.pragma('journal_mode = WAL');
  return {
    run: async (text) => {
      const stmt = file.prepare(text);
      return stmt.reader ? stmt.all() : (stmt.run(), []);
    },
    close: async () => file.close(),
  };
}
const store = await openStore();
const [{ project_id: projectId, uploaded_us: templateUs }] = await store.run(`select project_id, uploaded_us from files where uuid = '${template.file}'`);
const STEP = 10; // µs between cloned upload times (unique per project)
const BASE = Number(templateUs) - (LARGE + 10) * STEP;

/** Numbers [from, to) as a row source. */
const series = (from, to) => (pg ? `generate_series(${from}, ${to - 1}) as n(i)` : `(with recursive n(i) as (select ${from} union all select i + 1 from n where i < ${to - 1}) select i from n) as n`);
const hex = (expr, width) => (pg ? `lpad(to_hex(${expr}), ${width}, '0')` : `printf('%0${width}x', ${expr})`);
const uuidOf = (variant) => `${hex('n.i', 8)} || '-0000-4000-${variant}-' || ${hex('n.i', 12)}`;

/** Clones the template rows up to `total` files (and as many groups). */
async function grow(from, to) {
  const t = Date.now();
  const us = `${BASE} + n.i * ${STEP}`;
  await store.run(`insert into files (uuid, project_id, uploaded_us, stored_us, removed_us, size, mime_type, original_filename, filename, is_image, is_ready, content_info, metadata, appdata, blob_key, md5, source_url, tags, detected_mime)
    select ${uuidOf('8000')}, f.project_id, ${us},
      case when n.i % 10 in (0, 1, 2) then null else ${us} end,
      case when n.i % 10 = 0 then ${us} + 1 else null end,
      f.size + n.i % 5000, f.mime_type, f.original_filename, f.filename, f.is_image, f.is_ready, f.content_info, f.metadata, f.appdata, f.blob_key, f.md5, f.source_url,
      case when n.i % 100 = 7 then '["bench"]' else '[]' end, f.detected_mime
    from files f, ${series(from, to)} where f.uuid = '${template.file}'`);
  await store.run(`insert into file_tags (project_id, tag, uuid) select ${projectId}, 'bench', ${uuidOf('8000')} from ${series(from, to)} where n.i % 100 = 7`);
  await store.run(`insert into file_groups (uuid, project_id, files_count, created_us) select ${uuidOf('9000')}, g.project_id, g.files_count, g.created_us - (${LARGE + 10} - n.i) * ${STEP}
    from file_groups g, ${series(from, to)} where g.uuid = '${template.group}'`);
  // The rows went in behind the services' backs: recount as migration 0018 does (absent before it).
  const counted = await store.run(pg ? `select to_regclass('project_counters') is not null as has` : `select count(*) as has from sqlite_master where name = 'project_counters'`);
  if (counted[0].has === true || Number(counted[0].has) === 1) {
    await store.run(`update project_counters set
      removed_files = (select count(*) from files where project_id = ${projectId} and removed_us is not null),
      stored_files = (select count(*) from files where project_id = ${projectId} and removed_us is null and stored_us is not null),
      unstored_files = (select count(*) from files where project_id = ${projectId} and removed_us is null and stored_us is null),
      groups_count = (select count(*) from file_groups where project_id = ${projectId})
      where project_id = ${projectId}`);
  }
  if (pg) await store.run('analyze');
  return (Date.now() - t) / 1000;
}

const iso = (us) => new Date(Math.floor(us / 1000)).toISOString();
const cases = (n) => ({
  'files first page': '/files/?limit=100',
  'files stored=true': '/files/?limit=100&stored=true',
  'files stored=false': '/files/?limit=100&stored=false',
  'files removed=true': '/files/?limit=100&removed=true',
  'files newest first': '/files/?limit=100&ordering=-datetime_uploaded',
  // A cursor nine tenths of the way in (what a `next` link at that depth carries).
  'files deep cursor page': `/files/?limit=100&from=${encodeURIComponent(iso(BASE + Math.floor(n * 0.9) * STEP))}`,
  'groups first page': '/groups/?limit=100',
  'files tags=bench (counted)': '/files/?limit=100&tags=bench',
});

async function timeCases(n) {
  const s = await stowage(dataDir, { pin, env: { STOWAGE_ONLY: 'rest', STOWAGE_RATE_REST_PER_SEC: '1000000', STOWAGE_RATE_REST_BURST: '1000000', ...(schema ? { STOWAGE_DATABASE_SCHEMA: schema } : {}) } });
  const base = restBase(s);
  const out = {};
  try {
    for (const [name, uri] of Object.entries(cases(n))) {
      const times = [];
      let body;
      for (let i = 0; i < REPEAT + 3; i++) {
        const t = process.hrtime.bigint();
        const r = await fetch(base + uri, { headers: signedHeaders(uri) });
        body = await r.json();
        if (r.status !== 200) throw new Error(`GET ${uri}: ${r.status} ${JSON.stringify(body)}`);
        if (i >= 3) times.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      times.sort((a, b) => a - b);
      out[name] = { p50: times[Math.floor(times.length / 2)], p90: times[Math.floor(times.length * 0.9)], total: body.total, rows: body.results.length };
    }
  } finally {
    await s.stop();
  }
  return out;
}

console.log(`bench lists: ${os.cpus().length} CPUs, ${pg ? 'PostgreSQL' : 'SQLite'}, ${SMALL} then ${LARGE} files, p50 of ${REPEAT} sequential GETs; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; work dir ${work}`);
const results = {};
try {
  console.log(`clone to ${SMALL}: ${(await grow(0, SMALL - 1)).toFixed(1)} s`);
  results.small = await timeCases(SMALL);
  console.log(`clone to ${LARGE}: ${(await grow(SMALL - 1, LARGE - 1)).toFixed(1)} s; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  results.large = await timeCases(LARGE);
} finally {
  if (pg) await store.run(`drop schema ${schema} cascade`);
  await store.close();
}

const f = (v, d = 2) => v.toFixed(d);
console.log(`${'case'.padEnd(28)} ${`p50 ms @${SMALL}`.padStart(14)} ${`p50 ms @${LARGE}`.padStart(16)} ${'ratio'.padStart(6)} ${`p90 @${LARGE}`.padStart(12)} ${'total @large'.padStart(13)}  target`);
let missed = 0;
for (const name of Object.keys(results.small)) {
  const a = results.small[name];
  const b = results.large[name];
  const ratio = b.p50 / a.p50;
  const held = !name.includes('(counted)');
  if (held && ratio > TARGET) missed++;
  console.log(`${name.padEnd(28)} ${f(a.p50).padStart(14)} ${f(b.p50).padStart(16)} ${f(ratio).padStart(6)} ${f(b.p90).padStart(12)} ${String(b.total).padStart(13)}  ${held ? (ratio <= TARGET ? 'MET' : 'MISSED') : 'n/a'}`);
}
console.log(`target: page latency at ${LARGE} within ${TARGET}x of ${SMALL}: ${missed === 0 ? 'MET' : `MISSED in ${missed} case(s)`}; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
fs.rmSync(work, { recursive: true, force: true });
