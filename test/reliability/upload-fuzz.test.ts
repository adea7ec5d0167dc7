/**
 * Upload API fuzzer: hand-built multipart bodies for /base/ (odd boundaries, part
 * headers and fields, truncation) and hostile urlencoded forms for the other endpoints. Every
 * answer is below 500, the server keeps serving, and a failed upload leaves no bytes behind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type ProjectKeys, type TestServer } from '../helpers/server.js';
import { uploadBase } from '../helpers/rest.js';
import { auditDataDir } from './audit.js';
import { HOSTILE_STRINGS, pct, formText } from './bodies.js';
import { fuzzAgent, pool, raw, send } from './http-client.js';
import { multipartCase } from './multipart-bodies.js';
import { SOAK_ONLY, envNumber, pendingGate, report, sized } from './mode.js';
import { Random, seedFromEnv } from './random.js';
import { healthy } from './server-health.js';

/**
 * Cases whose fix is not on main yet (skipped; STOWAGE_RELIABILITY_UNGATE=all runs them):
 * - multipart-long-boundary: a boundary over ~254 characters was a 500 (landed).
 *   While pending the fuzzer draws boundaries of at most 200 characters.
 * - base-refuses-unknown-key-early: /base/ with an unknown key in the query string staged the
 *   whole body before its 403 (landed).
 */
const PENDING = new Set<string>();
const pending = pendingGate(PENDING);

const BODY_COUNT = envNumber('STOWAGE_RELIABILITY_UPLOADS', sized(1000, 50_000));
const SEED = seedFromEnv();
const CONCURRENCY = 6;
/**
 * No answer within this is a hang (a loaded 2-core machine staging 100 files needs a few seconds).
 * Bodies that wedged the multipart parser (`base-parts-iterator-hang`, a skipped part filling its
 * buffer in the closing chunk) are fixed: test/http/multipart-wedge.test.ts.
 */
const ANSWER_DEADLINE_MS = 60_000;

let server: TestServer;
let keys: ProjectKeys;
let uuid: string;

beforeAll(async () => {
  if (SOAK_ONLY) return;
  server = await startServer({
    env: {
      STOWAGE_RATE_UPLOAD_PER_SEC: '0',
      STOWAGE_RATE_UPLOAD_IP_PER_SEC: '0',
      STOWAGE_RATE_REST_PER_SEC: '0',
      STOWAGE_LOG_LEVEL: 'error',
      STOWAGE_MAX_UPLOAD_BYTES: String(1024 * 1024),
      // Bodies cut off mid-upload are dropped after 3 s of silence instead of the default 60 s.
      STOWAGE_BODY_IDLE_TIMEOUT_MS: '3000',
    },
  });
  keys = await server.createProject();
  uuid = (await uploadBase(server.upload, keys.public_key, [{ name: 'a.txt', data: 'a' }], { UPLOADCARE_STORE: '1' })).json.file as string;
}, 120_000);

afterAll(async () => server?.stop());

type FormTarget = { path: string; fields: (rnd: Random) => Record<string, unknown> };

const FORM_TARGETS: FormTarget[] = [
  { path: '/multipart/start/', fields: (rnd) => ({ UPLOADCARE_PUB_KEY: keys.public_key, filename: 'big.bin', size: rnd.pick([10485760, 0, -1, 1e30, '2e9', 'x']), content_type: 'application/octet-stream', part_size: rnd.pick([5242880, 1, 0, '5e9', -5]), UPLOADCARE_STORE: '1' }) },
  { path: '/multipart/complete/', fields: () => ({ UPLOADCARE_PUB_KEY: keys.public_key, uuid }) },
  // Only addresses and schemes that fail without a network: the fuzzer must not depend on DNS.
  { path: '/from_url/', fields: (rnd) => ({ pub_key: keys.public_key, source_url: rnd.pick(['http://127.0.0.1:1/', 'http://[::1]/', 'http://0x7f000001/', 'ftp://127.0.0.1/', 'javascript:alert(1)', 'http://169.254.169.254/latest/', 'http://10.0.0.1/', '', 'http://%00/']), store: '1', check_URL_duplicates: '1' }) },
  { path: '/from_url/status/', fields: (rnd) => ({ token: rnd.pick(['', 'x', '00000000-0000-0000-0000-000000000000']) }) },
  { path: '/group/', fields: (rnd) => ({ pub_key: keys.public_key, 'files[0]': uuid, 'files[1]': `${uuid}/-/resize/10x10/`, [`files[${rnd.int(0, 2000)}]`]: uuid }) },
  { path: '/group/info/', fields: () => ({ pub_key: keys.public_key, group_id: `${uuid}~1` }) },
  { path: '/info/', fields: () => ({ pub_key: keys.public_key, file_id: uuid }) },
];

function mutate(rnd: Random, fields: Record<string, unknown>): Record<string, unknown> {
  const out = { ...fields };
  const names = Object.keys(out);
  for (let i = rnd.int(0, 2); i > 0; i--) out[rnd.pick(names)] = rnd.pick(HOSTILE_STRINGS);
  if (rnd.chance(0.1)) delete out[rnd.pick(names)];
  return out;
}

/** The audit once requests still being cleaned up have finished (up to 15 s on a busy machine). */
async function settledAudit(s: TestServer): Promise<Awaited<ReturnType<typeof auditDataDir>>> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const audit = await auditDataDir(s);
    if ((audit.tempFiles === 0 && audit.orphanBlobs.length === 0) || Date.now() > deadline) return audit;
    await new Promise((r) => setTimeout(r, 500));
  }
}

describe.skipIf(SOAK_ONLY)('Upload API fuzzer', () => {
  it(`${BODY_COUNT} hostile /base/ multipart bodies and ${Math.round(BODY_COUNT / 2)} forms: every answer below 500, nothing left behind (seed ${SEED})`, async () => {
    const rnd = new Random(SEED);
    const agent = fuzzAgent(CONCURRENCY, ANSWER_DEADLINE_MS);
    const statuses = new Map<number, number>();
    const serverErrors: Array<{ what: string; status: number; answer: string }> = [];
    const failures: string[] = [];
    let resets = 0;
    const maxBoundary = pending('multipart-long-boundary') ? 200 : 400;
    const t0 = Date.now();
    const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
    await pool(BODY_COUNT, CONCURRENCY, async () => {
      const c = multipartCase(rnd, keys.public_key, maxBoundary);
      const query = rnd.chance(0.2) ? `?jsonerrors=1&pub_key=${pct(rnd.pick([keys.public_key, 'unknown', '']))}` : '';
      try {
        const a = await send(agent, `${server.upload}/base/${query}`, { method: 'POST', headers: { 'content-type': c.contentType }, body: c.body });
        count(a.status);
        if (a.status >= 500) serverErrors.push({ what: `/base/ ${c.contentType.slice(0, 80)}: ${c.label}`, status: a.status, answer: a.body.toString('utf8', 0, 200) });
      } catch (err) {
        // An early refusal (an unknown or missing key while anonymous staging is spent) drains a
        // small body or answers with Connection: close and a lingering close: a reset is a failure.
        if (/ECONNRESET|other side closed|EPIPE/.test(String(err))) resets++;
        failures.push(`/base/ ${c.label}: ${String(err)}`);
      }
    });
    await pool(Math.round(BODY_COUNT / 2), CONCURRENCY, async () => {
      const t = rnd.pick(FORM_TARGETS);
      const fields = mutate(rnd, t.fields(rnd));
      const asQuery = rnd.chance(0.3);
      const text = formText(rnd, fields);
      try {
        // On the kept-alive connections the /base/ bodies used (docs/reliability.md, "What the
        // suite guards", connections): a reset here is a failure.
        const a = asQuery
          ? await send(agent, `${server.upload}${t.path}?${text}`, { method: rnd.pick(['GET', 'POST'] as const) })
          : await send(agent, `${server.upload}${t.path}`, { method: 'POST', headers: { 'content-type': rnd.pick(['application/x-www-form-urlencoded', 'application/json', 'text/plain']) }, body: text });
        count(a.status);
        if (a.status >= 500) serverErrors.push({ what: `${t.path} ${text.slice(0, 200)}`, status: a.status, answer: a.body.toString('utf8', 0, 200) });
      } catch (err) {
        // A request line over Node's 16 KB limit is answered 431 with Connection: close and a
        // lingering close (src/http/common/client-error.ts): the client reads it, never a reset.
        failures.push(`${t.path} (${asQuery ? 'query' : 'body'} of ${text.length} chars): ${String(err)}`);
      }
    });
    await agent.close();
    report('upload-fuzz', { seed: SEED, bodies: BODY_COUNT, forms: Math.round(BODY_COUNT / 2), seconds: Math.round((Date.now() - t0) / 1000), statuses: Object.fromEntries(statuses), errors5xx: serverErrors.length, failures: failures.length, resetsWhileSending: resets });
    expect(serverErrors.slice(0, 20), 'responses >= 500').toEqual([]);
    expect(failures.slice(0, 20)).toEqual([]);
    expect(statuses.get(200) ?? 0, 'some uploads were valid').toBeGreaterThan(0);
    expect(await healthy(server)).toBe(true);
    // Failed uploads discard what they staged: no temp file, no blob without a row.
    const audit = await settledAudit(server);
    report('upload-fuzz audit', { rows: audit.rows, tempFiles: audit.tempFiles, orphanBlobs: audit.orphanBlobs.length, rowsWithoutBytes: audit.rowsWithoutBytes.length });
    expect(audit.rowsWithoutBytes).toEqual([]);
    expect(audit.tempFiles).toBe(0);
    expect(audit.orphanBlobs).toEqual([]);
  }, 0);

  it('bodies cut off mid-upload: no 5xx, no leftovers', async () => {
    const before = await settledAudit(server);
    const boundary = 'cutcutcut';
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="UPLOADCARE_PUB_KEY"\r\n\r\n${keys.public_key}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\n`);
    const payload = Buffer.alloc(300_000, 7);
    for (const sent of [0, 1000, 299_999]) {
      const body = Buffer.concat([head, payload.subarray(0, sent)]);
      const r = await raw(server.upload, Buffer.concat([Buffer.from(`POST /base/ HTTP/1.1\r\nhost: x\r\ncontent-type: multipart/form-data; boundary=${boundary}\r\ncontent-length: ${head.length + payload.length + 20}\r\n\r\n`), body]), { endWrite: true, waitMs: 5000 });
      expect(r.text).not.toMatch(/^HTTP\/1\.1 5\d\d/);
    }
    const audit = await settledAudit(server);
    expect(audit.tempFiles).toBe(before.tempFiles);
    expect(audit.orphanBlobs).toEqual([]);
    expect(await healthy(server)).toBe(true);
  });

  it.skipIf(pending('multipart-long-boundary'))('boundaries of 255 to 400 characters are 4xx or accepted, never 5xx', async () => {
    for (const length of [70, 71, 200, 254, 255, 256, 300, 400, 2000]) {
      const boundary = 'b'.repeat(length);
      const body = `--${boundary}\r\nContent-Disposition: form-data; name="UPLOADCARE_PUB_KEY"\r\n\r\n${keys.public_key}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhello\r\n--${boundary}--\r\n`;
      const r = await fetch(`${server.upload}/base/`, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
      expect(r.status, `boundary of ${length}: ${await r.text()}`).toBeLessThan(500);
    }
  });

  it.skipIf(pending('base-refuses-unknown-key-early'))('/base/ with an unknown key in the query string is refused before the body is staged', async () => {
    const before = await auditDataDir(server);
    let sent = 0;
    const chunk = Buffer.alloc(1024 * 1024, 1);
    const boundary = 'anon';
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\n`));
      },
      pull(c) {
        if (sent >= 300) return c.close();
        sent++;
        c.enqueue(chunk);
      },
    });
    const r = await fetch(`${server.upload}/base/?pub_key=unknownkey`, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body, duplex: 'half' } as RequestInit).catch(() => null);
    // Either a 403 or the connection cut: never 300 MB read and staged.
    if (r) expect(r.status).toBe(403);
    expect(sent, 'MB sent before the answer').toBeLessThan(100);
    const after = await auditDataDir(server);
    expect(after.tempFiles).toBe(before.tempFiles);
  });
});
