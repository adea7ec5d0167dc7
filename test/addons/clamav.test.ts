/**
 * Add-on framework and `uc_clamav_virus_scan` through a real clamd (one per file, with a hash
 * signature database this test writes): clean file, EICAR, purge_infected, the `file.infected` and
 * `file.info_updated` events, include=appdata, add-ons on upload, bad input, the 409 for a
 * concurrent call, and an execution that survives kill -9 of the server and runs once.
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type ProjectKeys, type TestServer } from '../helpers/server.js';
import { restClient, uploadBase } from '../helpers/rest.js';
import { EICAR, startClamd, type TestClamd } from '../helpers/clamd.js';
import { startReceiver, type Received, type Receiver } from '../webhooks/receiver.js';

const SCAN = 'uc_clamav_virus_scan';
/** A generated file the test's signature database names: a second, non-EICAR detection. */
const GENERATED = crypto.randomBytes(3000);

let clamd: TestClamd;
// Not useServer(): the durability case kills this server and starts another on its data dir.
let server: TestServer;
let restarted: TestServer | undefined;
let keys: ProjectKeys;
let call: ReturnType<typeof restClient>;
let hooks: Receiver;

const env = () => ({ STOWAGE_CLAMD_ADDRESS: clamd.socket, STOWAGE_ADDON_LEASE_MS: '2000', STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8' });
const json = (body: unknown) => ({ body: JSON.stringify(body), contentType: 'application/json' });

async function upload(data: Buffer | string, name = 'file.bin', srv: TestServer = server): Promise<string> {
  const r = await uploadBase(srv.upload, keys.public_key, [{ name, data }], { UPLOADCARE_STORE: '1' });
  expect(r.status).toBe(200);
  return r.json.file as string;
}

async function execute(target: string, params?: unknown, name = SCAN) {
  return call('POST', `/addons/${name}/execute/`, json(params === undefined ? { target } : { target, params }));
}

async function until<T>(check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 150));
  }
}

async function finished(requestId: string, name = SCAN, c = call) {
  return until(async () => {
    const r = await c('GET', `/addons/${name}/execute/status/?request_id=${requestId}`);
    expect(r.status).toBe(200);
    return r.json.status === 'in_progress' ? undefined : r.json;
  });
}

const about = (event: string, uuid: string) => (r: Received) => r.json?.hook?.event === event && r.json?.data?.uuid === uuid;

// useServer() does not fit: a test kills the server (SIGKILL) and restarts it on its data dir.
beforeAll(async () => {
  [clamd, hooks] = await Promise.all([startClamd({ 'Stowage-Test-Generated': GENERATED, 'Eicar-Test-Signature': EICAR }), startReceiver()]);
  server = await startServer({ env: env() });
  keys = await server.createProject();
  call = restClient(server.rest, keys);
  for (const event of ['file.info_updated', 'file.infected', 'file.deleted']) {
    const r = await call('POST', '/webhooks/', { body: new URLSearchParams({ target_url: hooks.url, event }).toString(), contentType: 'application/x-www-form-urlencoded' });
    expect(r.status).toBe(201);
  }
}, 120_000);
afterAll(async () => {
  await server?.stop();
  await restarted?.stop();
  await clamd?.stop();
  await hooks?.close();
});

describe('uc_clamav_virus_scan', () => {
  it('scans a clean file: appdata written with version and times, file.info_updated with previous_values', async () => {
    const uuid = await upload('just some harmless text', 'clean.txt');
    const r = await execute(uuid);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.json.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await finished(r.json.request_id)).toEqual({ status: 'done' });

    const info = await call('GET', `/files/${uuid}/?include=appdata`);
    const entry = info.json.appdata[SCAN];
    expect(entry.data).toEqual({ infected: false });
    expect(entry.version).toBe('1.0.1');
    expect(entry.datetime_created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(entry.datetime_updated).toBe(entry.datetime_created);
    // Without include=appdata there is none; the list carries it when asked.
    expect((await call('GET', `/files/${uuid}/`)).json.appdata).toBeUndefined();
    const list = await call('GET', '/files/?include=appdata&limit=100');
    expect(list.json.results.find((f: { uuid: string }) => f.uuid === uuid).appdata[SCAN].data).toEqual({ infected: false });

    const [hit] = await hooks.waitFor(1, 20_000, about('file.info_updated', uuid));
    expect(hit!.json.previous_values).toEqual({ appdata: { [SCAN]: null } });
    expect(hit!.json.initiator).toMatchObject({ type: 'addon', detail: { request_id: r.json.request_id, addon_name: SCAN } });
    expect(hit!.json.data.appdata[SCAN].data).toEqual({ infected: false });

    // A second scan keeps datetime_created, moves datetime_updated, and reports the previous entry.
    const again = await execute(uuid);
    expect(await finished(again.json.request_id)).toEqual({ status: 'done' });
    const entry2 = (await call('GET', `/files/${uuid}/?include=appdata`)).json.appdata[SCAN];
    expect(entry2.datetime_created).toBe(entry.datetime_created);
    expect(entry2.datetime_updated > entry.datetime_updated).toBe(true);
    const hits = await hooks.waitFor(2, 20_000, about('file.info_updated', uuid));
    expect(hits[1]!.json.previous_values).toEqual({ appdata: { [SCAN]: entry } });
  });

  it('finds EICAR: infected_with, file.infected, and the file stays without purge_infected', async () => {
    const uuid = await upload(EICAR, 'eicar.com');
    const r = await execute(uuid, { purge_infected: false });
    expect(await finished(r.json.request_id)).toEqual({ status: 'done' });
    const info = await call('GET', `/files/${uuid}/?include=appdata`);
    expect(info.json.appdata[SCAN].data).toEqual({ infected: true, infected_with: 'Eicar-Test-Signature.UNOFFICIAL' });
    expect(info.json.datetime_removed).toBeNull();
    const [infected] = await hooks.waitFor(1, 20_000, about('file.infected', uuid));
    expect(infected!.json.data.appdata[SCAN].data.infected).toBe(true);
    expect(infected!.json.initiator.type).toBe('addon');
  });

  it('purge_infected removes an infected file (a signature of a generated file) and sends file.deleted', async () => {
    const uuid = await upload(GENERATED, 'generated.bin');
    const r = await execute(uuid, { purge_infected: true });
    expect(await finished(r.json.request_id)).toEqual({ status: 'done' });
    const info = await call('GET', `/files/${uuid}/?include=appdata`);
    expect(info.json.datetime_removed).not.toBeNull();
    expect(info.json.appdata[SCAN].data).toEqual({ infected: true, infected_with: 'Stowage-Test-Generated.UNOFFICIAL' });
    await hooks.waitFor(1, 20_000, about('file.infected', uuid));
    await hooks.waitFor(1, 20_000, about('file.deleted', uuid));
    // A clean file with purge_infected stays.
    const clean = await upload('clean again', 'clean2.txt');
    const c = await execute(clean, { purge_infected: true });
    expect(await finished(c.json.request_id)).toEqual({ status: 'done' });
    expect((await call('GET', `/files/${clean}/`)).json.datetime_removed).toBeNull();
  });

  it('runs the project add-ons on upload (stowage project set --addons-on-upload)', async () => {
    const project = await server.createProject();
    expect(server.cli(['project', 'set', '--pub-key', project.public_key, '--addons-on-upload', SCAN])).toContain(`add-ons on upload: ${SCAN}`);
    expect(() => server.cli(['project', 'set', '--pub-key', project.public_key, '--addons-on-upload', 'no_such_addon'])).toThrow(/unknown add-on "no_such_addon"/);
    expect(server.cli(['project', 'set', '--pub-key', project.public_key])).toContain(`add-ons on upload: ${SCAN}`);
    const r = await uploadBase(server.upload, project.public_key, [{ name: 'eicar.txt', data: EICAR }]);
    const uuid = r.json.file as string;
    const pc = restClient(server.rest, project);
    const appdata = await until(async () => (await pc('GET', `/files/${uuid}/?include=appdata`)).json.appdata[SCAN]);
    expect(appdata.data.infected).toBe(true);
    // Each CLI call is a process start: slow on a busy machine, hence the longer bound.
  }, 180_000);
});

describe('bad input', () => {
  it('unknown add-on 404, unknown or removed file 404, wrong param types 400 naming the field', async () => {
    const uuid = await upload('x', 'x.txt');
    expect((await execute(uuid, undefined, 'no_such_addon')).status).toBe(404);
    expect((await call('GET', `/addons/no_such_addon/execute/status/?request_id=${crypto.randomUUID()}`)).status).toBe(404);
    expect((await execute(crypto.randomUUID())).status).toBe(404);
    const removed = await upload('y', 'y.txt');
    expect((await call('DELETE', `/files/${removed}/storage/`)).status).toBe(200);
    expect((await execute(removed)).status).toBe(404);
    const wrongType = await execute(uuid, { purge_infected: 'yes' });
    expect(wrongType.status).toBe(400);
    expect(wrongType.json.detail).toContain('params.purge_infected');
    const unknownParam = await execute(uuid, { purge: true });
    expect(unknownParam.status).toBe(400);
    expect(unknownParam.json.detail).toContain('params.purge');
    expect((await execute(uuid, [1])).status).toBe(400);
    expect((await call('POST', `/addons/${SCAN}/execute/`, json({}))).json.detail).toContain('target');
    expect((await call('POST', `/addons/${SCAN}/execute/`, json({ target: 'not-a-uuid' }))).status).toBe(400);
    expect((await call('POST', `/addons/${SCAN}/execute/`, { body: '{', contentType: 'application/json' })).status).toBe(400);
    expect((await call('GET', `/addons/${SCAN}/execute/status/`)).status).toBe(400);
    expect((await call('GET', `/addons/${SCAN}/execute/status/?request_id=${crypto.randomUUID()}`)).json).toEqual({ status: 'unknown' });
    // Another project's request is unknown here.
    const r = await execute(uuid);
    const other = restClient(server.rest, await server.createProject());
    expect((await other('GET', `/addons/${SCAN}/execute/status/?request_id=${r.json.request_id}`)).json).toEqual({ status: 'unknown' });
    await finished(r.json.request_id);
  }, 120_000);
});

describe('durability and concurrency', () => {
  it('refuses a concurrent call with 409, and an execution cut by kill -9 finishes after restart, once', async () => {
    const uuid = await upload('scanned across a crash', 'crash.txt');
    clamd.pause();
    let resumed = false;
    try {
      const first = await execute(uuid);
      expect(first.status).toBe(200);
      const second = await execute(uuid);
      expect(second.status).toBe(409);
      expect(second.json).toEqual({ detail: 'Concurrent call attempted' });
      // The scan is under way (its bytes sit in the frozen daemon's socket) when the node dies.
      await new Promise((r) => setTimeout(r, 500));
      expect((await call('GET', `/addons/${SCAN}/execute/status/?request_id=${first.json.request_id}`)).json).toEqual({ status: 'in_progress' });
      await server.kill();
      clamd.resume();
      resumed = true;
      restarted = await startServer({ env: env(), dataDir: server.dataDir, ...(server.schema ? { schema: server.schema } : {}) });
      const c = restClient(restarted.rest, keys);
      expect(await finished(first.json.request_id, SCAN, c)).toEqual({ status: 'done' });
      expect((await c('GET', `/files/${uuid}/?include=appdata`)).json.appdata[SCAN].data).toEqual({ infected: false });
      // Exactly one appdata change was recorded for this run.
      await hooks.waitFor(1, 20_000, about('file.info_updated', uuid));
      await new Promise((r) => setTimeout(r, 1500));
      expect(hooks.received.filter(about('file.info_updated', uuid))).toHaveLength(1);
      // Finished: the same file may be scanned again.
      const third = await c('POST', `/addons/${SCAN}/execute/`, json({ target: uuid }));
      expect(third.status).toBe(200);
      expect(await finished(third.json.request_id, SCAN, c)).toEqual({ status: 'done' });
    } finally {
      if (!resumed) clamd.resume();
    }
  }, 90_000);

  it('answers status error with the reason when clamd is not reachable', async () => {
    const srv = restarted ?? server;
    const lonely = await startServer({ env: { ...env(), STOWAGE_CLAMD_ADDRESS: '/nonexistent/clamd.sock', STOWAGE_LOG_LEVEL: 'warn' }, dataDir: srv.dataDir, ...(srv.schema ? { schema: srv.schema } : {}) });
    try {
      // The start-up check is logged once it has an answer (a moment after the listeners are up).
      await until(async () => (/uc_clamav_virus_scan unavailable: clamd is not reachable at \/nonexistent\/clamd.sock/.test(lonely.output()) ? true : undefined));
      const c = restClient(lonely.rest, keys);
      const uuid = (await uploadBase(lonely.upload, keys.public_key, [{ name: 'a.txt', data: 'a' }])).json.file as string;
      // Only this node may take the job: the other one can reach clamd.
      await srv.stop();
      const r = await c('POST', `/addons/${SCAN}/execute/`, json({ target: uuid }));
      const status = await finished(r.json.request_id, SCAN, c);
      expect(status.status).toBe('error');
      expect(status.error).toMatch(/clamd is not reachable at \/nonexistent\/clamd.sock/);
    } finally {
      await lonely.stop();
    }
  }, 120_000);
});
