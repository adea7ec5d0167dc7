// `node bench/lists.mjs` (after a build; also part of `npm run bench`): list pages at 10 k and at
// 1 M files (issue #19 item 3: page latency at 1 M within 1.2x of that at 10 k). Two stores, each
// with one project whose one uploaded file and one group are cloned by SQL (INSERT … SELECT) to
// BENCH_LISTS_SMALL and to BENCH_LISTS_LARGE rows (70 % stored, 20 % unstored, 10 % removed; 1 %
// tagged `bench`). A REST-only server runs on each (pinned to core 1 when taskset is there), and
// signed GETs go to the two in alternation, one at a time, so both sizes see the same load: p50 of
// BENCH_LISTS_REPEAT per case, each answer with its `total` / `totals`. Cases: the first page of
// each filter, the newest-first page, a deep cursor page, the groups, and a tag-filtered page
// (counted from file_tags: shown, not held to the target).
// SQLite by default; STOWAGE_DATABASE_URL=postgres://… runs it on PostgreSQL, a schema per store.
// BENCH_LISTS_KEEP=1 keeps the data dirs (and schemas) for EXPLAIN.
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
const KEEP = Boolean(process.env.BENCH_LISTS_KEEP);
const TARGET = 1.2;
const PG_URL = process.env.STOWAGE_DATABASE_URL ?? '';
const pg = /^postgres/.test(PG_URL);
const STEP = 10; // µs between cloned upload times (unique per project)
const pin = have('taskset') && os.cpus().length > 1 ? 1 : null;
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-bench-lists-'));
const BIN = snapshotApp(work);
const restBase = (s) => /REST API:\s+(\S+?)\/?\n/.exec(s.output())?.[1];

function signedHeaders(keys, uri) {
  const type = 'application/json';
  const date = new Date().toUTCString();
  const md5 = crypto.createHash('md5').update('').digest('hex');
  const sig = crypto.createHmac('sha1', keys.secret_key).update(['GET', md5, type, date, uri].join('\n')).digest('hex');
  return { 'content-type': type, accept: 'application/vnd.uploadcare-v0.7+json', date, authorization: `Uploadcare ${keys.public_key}:${sig}` };
}

/** The template file and group, uploaded through a full server. */
async function makeTemplate(dataDir, keys, env) {
  const s = await stowage(dataDir, { env });
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
}

/** The store, straight: better-sqlite3 on the data dir's file, or pg in the store's schema. */
async function openStore(dataDir, schema) {
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

/** Numbers [from, to) as a row source. */
const series = (from, to) => (pg ? `generate_series(${from}, ${to - 1}) as n(i)` : `(with recursive n(i) as (select ${from} union all select i + 1 from n where i < ${to - 1}) select i from n) as n`);
const hex = (expr, width) => (pg ? `lpad(to_hex(${expr}), ${width}, '0')` : `printf('%0${width}x', ${expr})`);
const uuidOf = (variant) => `${hex('n.i', 8)} || '-0000-4000-${variant}-' || ${hex('n.i', 12)}`;

/** A store with one project of `n` files and `n` groups (the template and its clones). */
async function prepare(label, n) {
  const t = Date.now();
  const dataDir = path.join(work, label);
  const schema = pg ? `bench_lists_${label}_${crypto.randomBytes(3).toString('hex')}` : undefined;
  const env = schema ? { STOWAGE_DATABASE_SCHEMA: schema } : {};
  const keys = JSON.parse(execFileSync(process.execPath, [BIN, 'project', 'create', '--name', 'bench', '--json'], { env: { ...process.env, STOWAGE_DATA_DIR: dataDir, ...env }, encoding: 'utf8' }));
  const template = await makeTemplate(dataDir, keys, env);
  const store = await openStore(dataDir, schema);
  const [{ project_id: projectId, uploaded_us: templateUs }] = await store.run(`select project_id, uploaded_us from files where uuid = '${template.file}'`);
  const base = Number(templateUs) - (n + 10) * STEP;
  const us = `${base} + n.i * ${STEP}`;
  await store.run(`insert into files (uuid, project_id, uploaded_us, stored_us, removed_us, size, mime_type, original_filename, filename, is_image, is_ready, content_info, metadata, appdata, blob_key, md5, source_url, tags, detected_mime)
    select ${uuidOf('8000')}, f.project_id, ${us},
      case when n.i % 10 in (0, 1, 2) then null else ${us} end,
      case when n.i % 10 = 0 then ${us} + 1 else null end,
      f.size + n.i % 5000, f.mime_type, f.original_filename, f.filename, f.is_image, f.is_ready, f.content_info, f.metadata, f.appdata, f.blob_key, f.md5, f.source_url,
      case when n.i % 100 = 7 then '["bench"]' else '[]' end, f.detected_mime
    from files f, ${series(0, n - 1)} where f.uuid = '${template.file}'`);
  await store.run(`insert into file_tags (project_id, tag, uuid) select ${projectId}, 'bench', ${uuidOf('8000')} from ${series(0, n - 1)} where n.i % 100 = 7`);
  await store.run(`insert into file_groups (uuid, project_id, files_count, created_us) select ${uuidOf('9000')}, g.project_id, g.files_count, g.created_us - (${n + 10} - n.i) * ${STEP}
    from file_groups g, ${series(0, n - 1)} where g.uuid = '${template.group}'`);
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
  // What autovacuum does after a bulk load; SQLite servers never run ANALYZE, nor does this.
  if (pg) await store.run('analyze');
  console.log(`${label}: ${n} files and groups cloned in ${((Date.now() - t) / 1000).toFixed(1)} s; load ${load()}`);
  return { label, n, dataDir, schema, env, keys, store, base };
}

const iso = (us) => new Date(Math.floor(us / 1000)).toISOString();
const cases = (st) => ({
  'files first page': '/files/?limit=100',
  'files stored=true': '/files/?limit=100&stored=true',
  'files stored=false': '/files/?limit=100&stored=false',
  'files removed=true': '/files/?limit=100&removed=true',
  'files newest first': '/files/?limit=100&ordering=-datetime_uploaded',
  // A cursor nine tenths of the way in (what a `next` link at that depth carries).
  'files deep cursor page': `/files/?limit=100&from=${encodeURIComponent(iso(st.base + Math.floor(st.n * 0.9) * STEP))}`,
  'groups first page': '/groups/?limit=100',
  'files tags=bench (counted)': '/files/?limit=100&tags=bench',
});

async function get(srv, uri) {
  const t = process.hrtime.bigint();
  const r = await fetch(srv.base + uri, { headers: signedHeaders(srv.keys, uri) });
  const body = await r.json();
  if (r.status !== 200) throw new Error(`GET ${uri}: ${r.status} ${JSON.stringify(body)}`);
  return { ms: Number(process.hrtime.bigint() - t) / 1e6, body };
}

console.log(`bench lists: ${os.cpus().length} CPUs, ${pg ? 'PostgreSQL' : 'SQLite'}, ${SMALL} and ${LARGE} files, p50 of ${REPEAT} GETs alternating between the two; load ${load()}; work dir ${work}`);
const stores = [await prepare('small', SMALL), await prepare('large', LARGE)];
const servers = [];
const results = { small: {}, large: {} };
try {
  for (const st of stores) {
    const s = await stowage(st.dataDir, { pin, env: { STOWAGE_ONLY: 'rest', STOWAGE_RATE_REST_PER_SEC: '1000000', STOWAGE_RATE_REST_BURST: '1000000', ...st.env } });
    servers.push({ proc: s, base: restBase(s), keys: st.keys, st });
  }
  const names = Object.keys(cases(stores[0]));
  for (const name of names) {
    const times = { small: [], large: [] };
    const last = {};
    for (let i = 0; i < REPEAT + 3; i++) {
      for (const srv of servers) {
        const r = await get(srv, cases(srv.st)[name]);
        if (i >= 3) times[srv.st.label].push(r.ms);
        last[srv.st.label] = r.body;
      }
    }
    for (const label of ['small', 'large']) {
      const sorted = times[label].sort((a, b) => a - b);
      results[label][name] = { p50: sorted[Math.floor(sorted.length / 2)], p90: sorted[Math.floor(sorted.length * 0.9)], total: last[label].total };
    }
  }
} finally {
  for (const srv of servers) await srv.proc.stop();
  for (const st of stores) {
    if (pg && !KEEP) await st.store.run(`drop schema ${st.schema} cascade`);
    await st.store.close();
  }
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
console.log(`target: page latency at ${LARGE} within ${TARGET}x of ${SMALL}: ${missed === 0 ? 'MET' : `MISSED in ${missed} case(s)`}; load ${load()}`);
if (KEEP) console.log(`kept ${work}${pg ? ` and schemas ${stores.map((st) => st.schema).join(', ')}` : ''}`);
else fs.rmSync(work, { recursive: true, force: true });
