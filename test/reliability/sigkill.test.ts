/**
 * SIGKILL rounds: the server is killed while work is in flight, restarted on the same
 * data dir, and the data dir is audited after each restart:
 *   - during many /base/ uploads: no acknowledged upload lost, no row without its bytes (blob
 *     readable, MD5 as recorded);
 *   - during /multipart/complete/: acknowledged completions kept, and a retry of every other one
 *     finishes it after the restart (503 while the dead node's claim lasts) with the right bytes;
 *   - during webhook deliveries: every committed upload's event (every row, acknowledged or not)
 *     is delivered at least once, and never twice within one server lifetime (a second copy only
 *     after a crash, for a delivery the receiver had answered but the server had not yet recorded:
 *     the at-least-once of docs/webhooks.md).
 * After the rounds each data dir is restarted with a short STOWAGE_LEFTOVERS_MIN_AGE_MS and the
 * leftover sweep must leave no temp file, no blob without a row and no orphan multipart part.
 */
import crypto from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer, type ProjectKeys, type TestServer } from '../helpers/server.js';
import { restClient, uploadBase } from '../helpers/rest.js';
import { request, type Res } from '../helpers/http.js';
import { startReceiver } from '../webhooks/receiver.js';
import { auditDataDir, fileRows, type Audit } from './audit.js';
import { SOAK_ONLY, report, sized } from './mode.js';
import { healthy } from './server-health.js';

const ROUNDS = sized(3, 10);
const UPLOADS_PER_ROUND = 150;
const ENV = { STOWAGE_RATE_UPLOAD_PER_SEC: '0', STOWAGE_RATE_UPLOAD_IP_PER_SEC: '0', STOWAGE_LOG_LEVEL: 'error' };

let server: TestServer | null = null;
afterAll(async () => server?.stop());

const SWEEP_ENV = {
  STOWAGE_LEFTOVERS_MIN_AGE_MS: '3000',
  STOWAGE_LEFTOVERS_SWEEP_MS: '500',
  // The minimum age must exceed these (config check): an upload younger than it may still commit.
  STOWAGE_UPLOAD_REQUEST_TIMEOUT_MS: '2500',
  STOWAGE_FROM_URL_TIMEOUT_MS: '2500',
};

/**
 * Stops `dir`'s server, restarts it with a short leftover age and waits (up to 60 s) for the sweep
 * to leave the data dir clean; returns the audits before and after.
 */
async function sweptAudit(dir: TestServer, env: Record<string, string>): Promise<{ before: Audit; after: Audit; server: TestServer }> {
  await dir.stop();
  const before = await auditDataDir(dir);
  const swept = await startServer({ dataDir: dir.dataDir, env: { ...env, ...SWEEP_ENV } });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const after = await auditDataDir(swept);
    const clean = after.tempFiles === 0 && after.orphanBlobs.length === 0;
    if (clean || Date.now() > deadline) return { before, after, server: swept };
    await new Promise((r) => setTimeout(r, 500));
  }
}

function expectSweptClean(audit: Audit): void {
  expect(audit.tempFiles, 'temp files after the sweep').toBe(0);
  expect(audit.orphanBlobs, 'blobs without a row after the sweep').toEqual([]);
  // Parts of a completion killed after its commit but before it removed them stay with their
  // upload's row until the multipart expiry (STOWAGE_MULTIPART_TTL_MS) removes both: reported only.
  expect(audit.rowsWithoutBytes, 'rows without their bytes after the sweep').toEqual([]);
}

describe.skipIf(SOAK_ONLY || !!process.env['STOWAGE_DATABASE_URL'])('SIGKILL rounds (SQLite)', () => {
  it(`${ROUNDS} rounds of SIGKILL during ${UPLOADS_PER_ROUND} uploads: no acknowledged upload lost, no row without its bytes`, async () => {
    server = await startServer({ env: ENV });
    const keys = await server.createProject();
    const acknowledged = new Map<string, string>();
    const rounds: Array<Record<string, unknown>> = [];
    for (let round = 0; round < ROUNDS; round++) {
      const current: TestServer = server;
      let killed = false;
      let acked = 0;
      const uploads = Array.from({ length: UPLOADS_PER_ROUND }, async (_, i) => {
        const data = crypto.randomBytes(20_000 + ((i * 7919) % 400_000));
        try {
          const r = await uploadBase(current.upload, keys.public_key, [{ name: `r${round}-${i}.bin`, data }], { UPLOADCARE_STORE: '1' });
          if (r.status === 200 && !killed) {
            acknowledged.set(r.json.file as string, crypto.createHash('md5').update(data).digest('hex'));
            acked++;
          }
        } catch {
          // Reset by the kill.
        }
      });
      while (acked < UPLOADS_PER_ROUND / 4) await new Promise((r) => setTimeout(r, 5));
      await current.kill();
      killed = true;
      await Promise.all(uploads);
      server = await startServer({ dataDir: current.dataDir, env: ENV });
      expect(await healthy(server)).toBe(true);
      const audit = await auditDataDir(server);
      const rows = new Map((await fileRows(server)).map((r) => [r.uuid, r]));
      const lost = [...acknowledged.keys()].filter((u) => !rows.has(u));
      const changed = [...acknowledged.entries()].filter(([u, md5]) => rows.get(u)?.md5 !== md5).map(([u]) => u);
      rounds.push({ round, acknowledgedSoFar: acknowledged.size, rows: audit.rows, lost: lost.length, rowsWithoutBytes: audit.rowsWithoutBytes.length, tempFiles: audit.tempFiles, tempMb: Math.round(audit.tempBytes / 1e6), orphanBlobs: audit.orphanBlobs.length });
      expect(lost, 'acknowledged uploads lost').toEqual([]);
      expect(changed, 'acknowledged uploads with other bytes').toEqual([]);
      expect(audit.rowsWithoutBytes, 'rows without their bytes').toEqual([]);
    }
    const { before, after, server: swept } = await sweptAudit(server, ENV);
    server = swept;
    report('sigkill-uploads', { rounds, sweep: leftovers(before, after) });
    expectSweptClean(after);
  }, 600_000);
});

function leftovers(before: Audit, after: Audit): Record<string, number> {
  return { tempFilesBefore: before.tempFiles, orphanBlobsBefore: before.orphanBlobs.length, orphanPartsBefore: before.orphanParts.length, tempFilesAfter: after.tempFiles, orphanBlobsAfter: after.orphanBlobs.length, orphanPartsAfter: after.orphanParts.length };
}


/** Servers of the rounds below still running (stopped after the file). */
const running = new Set<TestServer>();
afterAll(async () => {
  for (const s of running) await s.stop();
});

async function start(opts: Parameters<typeof startServer>[0]): Promise<TestServer> {
  const s = await startServer(opts);
  running.add(s);
  return s;
}

async function killed(s: TestServer): Promise<void> {
  await s.kill();
  running.delete(s);
}

const postForm = (url: string, fields: Record<string, string>): Promise<Res> =>
  request(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });

const md5 = (b: Buffer) => crypto.createHash('md5').update(b).digest('hex');

const MULTIPART_ROUNDS = sized(1, 5);
const MULTIPART_PER_ROUND = 6;
/** Just over the 10 MiB multipart minimum: three parts of the default 5 MiB part size. */
const MULTIPART_BYTES = 10_485_760 + 600_000;
const MIN_PART_BYTES = 5_242_880;
const MULTIPART_ENV = { ...ENV, STOWAGE_MULTIPART_CLAIM_LEASE_MS: '2000' };

/** Starts a multipart upload of `data` and PUTs its parts; returns its uuid. */
async function multipartParts(s: TestServer, keys: ProjectKeys, data: Buffer, name: string): Promise<string> {
  const r = await postForm(`${s.upload}/multipart/start/`, { UPLOADCARE_PUB_KEY: keys.public_key, filename: name, content_type: 'application/octet-stream', size: String(data.length), UPLOADCARE_STORE: '1' });
  if (r.status !== 200) throw new Error(`multipart start: ${r.status} ${r.text}`);
  const urls = r.json.parts as string[];
  await Promise.all(
    urls.map(async (url, i) => {
      const put = await fetch(url, { method: 'PUT', body: data.subarray(i * MIN_PART_BYTES, (i + 1) * MIN_PART_BYTES) });
      if (put.status !== 200) throw new Error(`part ${i}: ${put.status}`);
    }),
  );
  return r.json.uuid as string;
}

describe.skipIf(SOAK_ONLY || !!process.env['STOWAGE_DATABASE_URL'])('SIGKILL rounds during multipart completions (SQLite)', () => {
  it(`${MULTIPART_ROUNDS} rounds of SIGKILL during ${MULTIPART_PER_ROUND} /multipart/complete/: acknowledged ones kept, every other one finished by a retry`, async () => {
    let s = await start({ env: MULTIPART_ENV });
    const keys = await s.createProject();
    const expected = new Map<string, string>();
    const rounds: Array<Record<string, unknown>> = [];
    for (let round = 0; round < MULTIPART_ROUNDS; round++) {
      const datas = Array.from({ length: MULTIPART_PER_ROUND }, () => crypto.randomBytes(MULTIPART_BYTES));
      const uuids = await Promise.all(datas.map((d, i) => multipartParts(s, keys, d, `m${round}-${i}.bin`)));
      uuids.forEach((u, i) => expected.set(u, md5(datas[i]!)));
      const acknowledged = new Set<string>();
      let dead = false;
      let firstAck = () => undefined as void;
      const oneAcknowledged = new Promise<void>((r) => (firstAck = r));
      const current = s;
      const completions = uuids.map((uuid) =>
        postForm(`${current.upload}/multipart/complete/`, { UPLOADCARE_PUB_KEY: keys.public_key, uuid }).then(
          (r) => {
            if (r.status !== 200 || dead) return;
            acknowledged.add(uuid);
            firstAck();
          },
          () => undefined,
        ),
      );
      // Kill once the first completion is acknowledged: the others are assembling.
      await Promise.race([oneAcknowledged, Promise.all(completions)]);
      await killed(current);
      dead = true;
      await Promise.all(completions);
      s = await start({ dataDir: current.dataDir, env: MULTIPART_ENV });
      const rows = new Map((await fileRows(s)).map((r) => [r.uuid, r]));
      const lost = [...acknowledged].filter((u) => rows.get(u)?.md5 !== expected.get(u));
      // Every other completion is retried until it finishes: 503 while the dead claim lasts.
      const statuses: number[] = [];
      for (const uuid of uuids.filter((u) => !acknowledged.has(u))) {
        const deadline = Date.now() + 60_000;
        for (;;) {
          const r = await postForm(`${s.upload}/multipart/complete/`, { UPLOADCARE_PUB_KEY: keys.public_key, uuid });
          statuses.push(r.status);
          // A completion that finished before the kill but was not acknowledged says so.
          if (r.status === 200 || (r.status === 400 && r.text === 'File is already uploaded.' && rows.has(uuid))) break;
          expect([503], `retry of ${uuid}: ${r.status} ${r.text}`).toContain(r.status);
          expect(Date.now(), `retry of ${uuid} still refused`).toBeLessThan(deadline);
          await new Promise((res) => setTimeout(res, 250));
        }
      }
      const audit = await auditDataDir(s);
      const after = new Map((await fileRows(s)).map((r) => [r.uuid, r]));
      const wrong = uuids.filter((u) => after.get(u)?.md5 !== expected.get(u));
      rounds.push({ round, acknowledged: acknowledged.size, retried: MULTIPART_PER_ROUND - acknowledged.size, retryStatuses: statuses.join(','), tempFiles: audit.tempFiles, orphanBlobs: audit.orphanBlobs.length, orphanParts: audit.orphanParts.length });
      expect(lost, 'acknowledged completions lost').toEqual([]);
      expect(wrong, 'uploads without their file or with other bytes').toEqual([]);
      expect(audit.rowsWithoutBytes, 'rows without their bytes').toEqual([]);
    }
    running.delete(s);
    const { before, after, server: swept } = await sweptAudit(s, MULTIPART_ENV);
    running.add(swept);
    report('sigkill-multipart', { rounds, sweep: leftovers(before, after) });
    expectSweptClean(after);
  }, 600_000);
});

const WEBHOOK_ROUNDS = sized(2, 8);
const WEBHOOK_UPLOADS_PER_ROUND = 60;
// The default 15 s delivery timeout: a slow answer on a busy machine must not look like a failure (and be re-sent).
const WEBHOOK_ENV = { ...ENV, STOWAGE_OUTBOUND_ALLOW: '127.0.0.0/8', STOWAGE_WEBHOOK_RETRY_BASE_MS: '200', STOWAGE_WEBHOOK_RETRY_MAX_MS: '500' };

describe.skipIf(SOAK_ONLY || !!process.env['STOWAGE_DATABASE_URL'])('SIGKILL rounds during webhook deliveries (SQLite)', () => {
  it(`${WEBHOOK_ROUNDS} rounds of SIGKILL while ${WEBHOOK_UPLOADS_PER_ROUND} uploads' events are delivered: every committed event delivered, no duplicate within one lifetime`, async () => {
    /** Server lifetime (bumped at each kill) in which each delivery arrived, by event uuid. */
    let lifetime = 0;
    const arrivals = new Map<string, number[]>();
    const receiver = await startReceiver((_n, req) => {
      const uuid = req.json?.data?.uuid as string | undefined;
      if (req.json?.hook?.event === 'file.uploaded' && uuid) arrivals.set(uuid, [...(arrivals.get(uuid) ?? []), lifetime]);
      return { status: 200 };
    });
    try {
      let s = await start({ env: WEBHOOK_ENV });
      const keys = await s.createProject();
      const sub = await restClient(s.rest, keys)('POST', '/webhooks/', { body: new URLSearchParams({ target_url: receiver.url, event: 'file.uploaded' }).toString(), contentType: 'application/x-www-form-urlencoded' });
      expect(sub.status, sub.text).toBe(201);
      const rounds: Array<Record<string, unknown>> = [];
      for (let round = 0; round < WEBHOOK_ROUNDS; round++) {
        const current = s;
        let acked = 0;
        let settled = 0;
        const deliveredBefore = arrivals.size;
        const uploads = Array.from({ length: WEBHOOK_UPLOADS_PER_ROUND }, async (_, i) => {
          try {
            const r = await uploadBase(current.upload, keys.public_key, [{ name: `w${round}-${i}.txt`, data: crypto.randomBytes(2000) }], { UPLOADCARE_STORE: '1' });
            if (r.status === 200) acked++;
          } catch {
            // Reset by the kill.
          } finally {
            settled++;
          }
        });
        // Kill while uploads commit and their deliveries are under way.
        while ((acked < WEBHOOK_UPLOADS_PER_ROUND / 2 || arrivals.size - deliveredBefore < 5) && settled < WEBHOOK_UPLOADS_PER_ROUND) await new Promise((r) => setTimeout(r, 5));
        await killed(current);
        lifetime++;
        await Promise.all(uploads);
        s = await start({ dataDir: current.dataDir, env: WEBHOOK_ENV });
        rounds.push({ round, ackedBeforeKill: acked, deliveredAtKill: arrivals.size - deliveredBefore });
      }
      // Every committed upload (each row, acknowledged or not) gets its event.
      const committed = (await fileRows(s)).map((r) => r.uuid);
      const deadline = Date.now() + 90_000;
      let missing = committed;
      while (Date.now() < deadline) {
        missing = committed.filter((u) => !arrivals.has(u));
        if (missing.length === 0) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      const twiceInOneLifetime = [...arrivals].filter(([, lives]) => new Set(lives).size !== lives.length).map(([u, lives]) => `${u}: ${lives.join(',')}`);
      const redeliveredAfterCrash = [...arrivals.values()].filter((lives) => lives.length > 1).length;
      report('sigkill-webhooks', { rounds, committed: committed.length, delivered: committed.length - missing.length, redeliveredAfterCrash, twiceInOneLifetime: twiceInOneLifetime.length });
      expect(missing.slice(0, 10), 'committed uploads whose event never came').toEqual([]);
      expect(twiceInOneLifetime, 'events delivered twice by one server lifetime').toEqual([]);
      const audit = await auditDataDir(s);
      expect(audit.rowsWithoutBytes).toEqual([]);
    } finally {
      await receiver.close();
    }
  }, 600_000);
});
