/**
 * `stowage import` from one running Stowage (the source) into another's store (the target),
 * over real HTTP, with the target's real metadata store (SQLite, or PostgreSQL in its own schema)
 * and blob store. A small HTTP proxy in front of the source CDN stalls a download so the import
 * can be killed mid-file, and answers 503/429/404 to exercise retries and failures.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { request, type Res } from '../helpers/http.js';
import type { RestCall } from '../helpers/rest.js';

const BIN = path.join(ROOT, 'bin', 'stowage.js');
const source = useServer();
const target = useServer();

interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `stowage import` against the target's store; `onStart` gets the child (to kill it). */
function runImport(args: string[], onStart: (kill: () => void) => void = () => undefined, env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'import', '--progress-interval', '1', ...args], { env: { ...target.server.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('exit', (status) => resolve({ status, stdout, stderr }));
    onStart(() => child.kill('SIGKILL'));
  });
}

const sourceArgs = (keys: { public_key: string; secret_key: string }, targetPub: string) => [
  '--project', targetPub, '--pub-key', keys.public_key, '--secret-key', keys.secret_key, '--from-rest', source.rest, '--retries', '4',
];

/** Every file of a project (live and removed), with appdata, in upload order. */
async function allFiles(call: RestCall): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  for (const removed of ['false', 'true']) {
    const r = await call('GET', `/files/?removed=${removed}&limit=1000&include=appdata`);
    expect(r.status, r.text).toBe(200);
    out.push(...(r.json.results as Array<Record<string, unknown>>));
  }
  return out;
}

async function allGroups(call: RestCall): Promise<Array<Record<string, unknown>>> {
  const r = await call('GET', '/groups/?limit=1000');
  expect(r.status, r.text).toBe(200);
  const out: Array<Record<string, unknown>> = [];
  for (const g of r.json.results as Array<{ id: string }>) {
    const d = await call('GET', `/groups/${g.id}/`);
    expect(d.status, d.text).toBe(200);
    out.push(d.json);
  }
  return out;
}

/** The source's JSON as the target should answer it: only the hosts of the URLs change. */
const rehosted = (value: unknown): unknown => JSON.parse(JSON.stringify(value).split(`${source.cdn}/`).join(`${target.cdn}/`).split(`${source.rest}/`).join(`${target.rest}/`));

async function postGroup(keysPub: string, files: string[]): Promise<string> {
  const form = new URLSearchParams([['pub_key', keysPub], ...files.map((f, i): [string, string] => [`files[${i}]`, f])]);
  const r = await request(`${source.upload}/group/`, { method: 'POST', body: form });
  expect(r.status, r.text).toBe(200);
  return r.json.id as string;
}

/**
 * A POST that is sent again when it could not be written at all: newProject() blocks the event
 * loop while its CLI runs, and a pooled keep-alive connection the server closed meanwhile fails
 * with EPIPE/ECONNRESET before the server read anything.
 */
async function postOnce(url: string, body: FormData): Promise<Res> {
  try {
    return await request(url, { method: 'POST', body });
  } catch (err) {
    const code = ((err as { cause?: { code?: string } }).cause ?? {}).code;
    if (code !== 'EPIPE' && code !== 'ECONNRESET') throw err;
    return request(url, { method: 'POST', body });
  }
}

const png = (r: number, g: number, b: number, width = 40, height = 30) => sharp({ create: { width, height, channels: 3, background: { r, g, b } } }).png().toBuffer();
const jpeg = () => sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 10, g: 200, b: 90 } } }).jpeg().toBuffer();

describe('stowage import (Stowage to Stowage)', () => {
  // The tests below run in order on what the first one imported (one CLI run each: its start is slow).
  const made: { photo: string; pic: string; notes: string; draft: string; gone: string; grouped: string; withGone: string } = {
    photo: '', pic: '', notes: '', draft: '', gone: '', grouped: '', withGone: '',
  };
  let targetFiles: Array<Record<string, unknown>> = [];
  let targetGroups: Array<Record<string, unknown>> = [];
  let other: { keys: { public_key: string }; call: RestCall } | null = null;

  beforeAll(async () => {
    // A second project on the target, for the uuid clash below (its admin command is slow to start).
    other = await target.newProject();
  });

  it('copies files, metadata, tags, stored/removed state and groups keeping uuids, and every field', async () => {
    const up = (name: string, data: Buffer | string, opts: Parameters<typeof source.uploadFile>[2] = {}) => source.uploadFile(name, data, opts);
    made.photo = await up('Photo 1.png', await png(200, 30, 30), { type: 'image/png', fields: { 'metadata[subsystem]': 'shop', 'metadata[order]': '42', tags: 'red,product' } });
    made.pic = await up('pic.jpg', await jpeg(), { type: 'image/jpeg' });
    made.notes = await up('notes.txt', 'plain text notes\n', { type: 'text/plain', fields: { 'metadata[kind]': 'notes' } });
    made.draft = await up('draft.txt', 'not stored yet', { store: false });
    made.gone = await up('gone.txt', 'removed later');
    made.grouped = await postGroup(source.keys.public_key, [`${made.photo}/-/resize/20x/`, made.notes]);
    made.withGone = await postGroup(source.keys.public_key, [made.gone, made.pic]);
    expect((await source.call('DELETE', `/files/${made.gone}/storage/`)).status).toBe(200);

    const first = await runImport(sourceArgs(source.keys, target.keys.public_key));
    expect(first.status, first.stdout + first.stderr).toBe(0);
    expect(first.stdout).toMatch(/files 5\/5 \(5 imported, 0 already here\)/);
    expect(first.stdout).toMatch(/groups 2\/2 \(2 imported, 0 already here\)/);

    // Every field of every file and group, as the REST API answers it, equals the source's
    // except the hosts in its URLs.
    const sourceFiles = await allFiles(source.call);
    expect(sourceFiles.map((f) => f['uuid']).sort()).toEqual([made.photo, made.pic, made.notes, made.draft, made.gone].sort());
    targetFiles = await allFiles(target.call);
    expect(targetFiles).toEqual(rehosted(sourceFiles));
    const byUuid = new Map(targetFiles.map((f) => [f['uuid'], f]));
    expect(byUuid.get(made.photo)).toMatchObject({ metadata: { subsystem: 'shop', order: '42' }, tags: ['red', 'product'], is_image: true, original_filename: 'Photo 1.png' });
    expect(byUuid.get(made.draft)).toMatchObject({ datetime_stored: null, datetime_removed: null });
    expect(byUuid.get(made.gone)?.['datetime_removed']).toEqual(expect.any(String));
    const sourceGroups = await allGroups(source.call);
    expect(sourceGroups.map((g) => g['id']).sort()).toEqual([made.grouped, made.withGone].sort());
    targetGroups = await allGroups(target.call);
    expect(targetGroups).toEqual(rehosted(sourceGroups));
    // The list totals (project counters, moved by the import's inserts) equal the source's.
    const totalsOf = async (call: RestCall) => {
      const [files, groups] = await Promise.all([call('GET', '/files/?limit=1'), call('GET', '/groups/?limit=1')]);
      return { total: files.json.total, totals: files.json.totals, groups: groups.json.total };
    };
    expect(await totalsOf(target.call)).toEqual(await totalsOf(source.call));
  });

  it("serves the same bytes at the target's CDN URLs (files and group members)", async () => {
    const byUuid = new Map(targetFiles.map((f) => [f['uuid'], f]));
    for (const uuid of [made.photo, made.pic, made.notes, made.draft]) {
      const url = String(byUuid.get(uuid)?.['original_file_url']);
      expect(url.startsWith(`${target.cdn}/${uuid}/`)).toBe(true);
      const [a, b] = await Promise.all([request(url.replace(target.cdn, source.cdn)), request(url)]);
      expect(b.status).toBe(200);
      expect(b.body.equals(a.body)).toBe(true);
    }
    expect((await request(`${target.cdn}/${made.gone}/`)).status).toBe(404);
    const [srcNth, dstNth] = await Promise.all([request(`${source.cdn}/${made.grouped}/nth/0/`), request(`${target.cdn}/${made.grouped}/nth/0/`)]);
    expect(dstNth.status).toBe(200);
    const [srcMeta, dstMeta] = await Promise.all([sharp(srcNth.body).metadata(), sharp(dstNth.body).metadata()]);
    expect(dstMeta.width).toBe(20);
    expect(dstMeta.width).toBe(srcMeta.width);
    expect((await request(`${target.cdn}/${made.withGone}/nth/0/`)).status).toBe((await request(`${source.cdn}/${made.withGone}/nth/0/`)).status);
  });

  it('importing again changes nothing', async () => {
    const again = await runImport(sourceArgs(source.keys, target.keys.public_key));
    expect(again.status, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toMatch(/files 5\/5 \(0 imported, 5 already here\)/);
    expect(again.stdout).toMatch(/groups 2\/2 \(0 imported, 2 already here\)/);
    expect(await allFiles(target.call)).toEqual(targetFiles);
    expect(await allGroups(target.call)).toEqual(targetGroups);
  });

  it('reports uuids another project of the target holds, and overwrites nothing', async () => {
    const clash = await runImport(sourceArgs(source.keys, other?.keys.public_key ?? ''));
    expect(clash.status).toBe(1);
    expect(clash.stdout).toContain(`file ${made.photo}: this uuid belongs to another project here`);
    expect(clash.stdout).toContain(`group ${made.grouped}: already exists here`);
    expect(clash.stdout).toMatch(/files 5\/5 \(0 imported, 0 already here, 5 failed\)/);
    expect(await allFiles(other?.call as RestCall)).toEqual([]);
    expect(await allFiles(target.call)).toEqual(targetFiles);
  });

  it('refuses to start without the source secret key, and reports a source that refuses the keys', async () => {
    const noSecret = await runImport(['--project', target.keys.public_key, '--pub-key', source.keys.public_key, '--from-rest', source.rest]);
    expect(noSecret.status).toBe(1);
    expect(noSecret.stderr).toMatch(/secret key is needed/);
    const badKeys = await runImport(sourceArgs({ public_key: source.keys.public_key, secret_key: 'f'.repeat(40) }, target.keys.public_key));
    expect(badKeys.status).toBe(1);
    expect(badKeys.stdout).toMatch(/listing files\/\?limit=100&include=appdata: GET \/files\/\?limit=100&include=appdata: HTTP 401/);
    // The secret may come from the environment instead of the command line: it reaches the source.
    const fromEnv = await runImport(['--project', target.keys.public_key, '--pub-key', source.keys.public_key, '--from-rest', source.rest], undefined, { STOWAGE_IMPORT_SECRET_KEY: 'f'.repeat(40) });
    expect(fromEnv.status).toBe(1);
    expect(fromEnv.stdout).toMatch(/HTTP 401/);
  });
});

/** A proxy in front of the source CDN whose behaviour each phase of the test sets. */
type Mode = { kind: 'pass' } | { kind: 'stall-after'; served: number; onStall: () => void } | { kind: 'flaky'; failed: Set<string>; missing: string | null };

describe('interrupted and resumed import', () => {
  let mode: Mode = { kind: 'pass' };
  let proxy: http.Server;
  let proxyUrl = '';
  const stalled: http.ServerResponse[] = [];
  let downloads = 0;
  // The three tests below are the phases of one import, in order (one CLI run each).
  const uuids: string[] = [];
  let args: string[] = [];
  let dst: { call: RestCall } | null = null;

  beforeAll(async () => {
    proxy = http.createServer((req, res) => {
      const uuid = (req.url ?? '').split('/')[1] ?? '';
      if (mode.kind === 'flaky') {
        if (uuid === mode.missing) return void res.writeHead(404).end();
        if (!mode.failed.has(uuid)) {
          mode.failed.add(uuid);
          // Alternate the two answers the importer must wait out.
          return void res.writeHead(mode.failed.size % 2 ? 503 : 429, { 'retry-after': '0' }).end('try later');
        }
      }
      const upstream = http.get(`${source.cdn}${req.url ?? '/'}`, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        if (req.method === 'HEAD') return void res.end();
        if (mode.kind === 'stall-after' && downloads++ >= mode.served) {
          // Half the body, then silence: the importer is killed in the middle of this file.
          up.once('data', (chunk: Buffer) => {
            res.write(chunk.subarray(0, Math.floor(chunk.length / 2)));
            stalled.push(res);
            up.destroy();
            if (mode.kind === 'stall-after') mode.onStall();
          });
          return;
        }
        up.pipe(res);
      });
      upstream.on('error', () => res.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    // The source project's files, read through the proxy.
    const src = await source.newProject();
    const to = await target.newProject();
    dst = to;
    for (let i = 0; i < 8; i++) {
      const form = new FormData();
      form.append('UPLOADCARE_PUB_KEY', src.keys.public_key);
      form.append('UPLOADCARE_STORE', '1');
      form.append('file', new Blob([Buffer.alloc(40_000 + i, i + 1)]), `blob-${i}.bin`);
      const r = await postOnce(`${source.upload}/base/`, form);
      expect(r.status, r.text).toBe(200);
      uuids.push(r.json.file as string);
    }
    args = [...sourceArgs(src.keys, to.keys.public_key), '--from-cdn', proxyUrl, '--concurrency', '1'];
  });

  afterAll(async () => {
    for (const res of stalled) res.destroy();
    await new Promise((resolve) => proxy.close(resolve));
  });

  it('a run killed (SIGKILL) in the middle of a file leaves the files before it', async () => {
    downloads = 0;
    const killed = await runImport(args, (kill) => {
      mode = { kind: 'stall-after', served: 3, onStall: kill };
    });
    expect(killed.status).toBe(null); // ended by the signal
    expect(await allFiles(dst?.call as RestCall)).toHaveLength(3);
  });

  it('the next run skips them and copies the rest, waiting out 503 and 429; a file the source lost is reported', async () => {
    mode = { kind: 'flaky', failed: new Set(), missing: uuids[7] ?? null };
    const resumed = await runImport(args);
    expect(resumed.status).toBe(1);
    expect(resumed.stdout).toMatch(/files 8\/8 \(4 imported, 3 already here, 1 failed\)/);
    expect(resumed.stdout).toMatch(/\d+ retries/);
    expect(resumed.stdout).toContain(`file ${uuids[7]}: GET ${proxyUrl}/${uuids[7]}/: HTTP 404`);
  });

  it('a last run finishes, and every file serves the bytes of the source', async () => {
    mode = { kind: 'pass' };
    const finished = await runImport(args);
    expect(finished.status, finished.stdout + finished.stderr).toBe(0);
    expect(finished.stdout).toMatch(/files 8\/8 \(1 imported, 7 already here\)/);
    const files = await allFiles(dst?.call as RestCall);
    expect(files.map((f) => f['uuid']).sort()).toEqual([...uuids].sort());
    for (const uuid of uuids) {
      const [a, b]: Res[] = await Promise.all([request(`${source.cdn}/${uuid}/`), request(`${target.cdn}/${uuid}/`)]);
      expect(b.status).toBe(200);
      expect(b.body.equals(a.body)).toBe(true);
    }
  });
});
