/**
 * Full disk, run as root only: the data dir (SQLite file and blobs) is a 24 MB
 * tmpfs, filled by concurrent uploads. Every refusal is a 507 with Retry-After and a clear message
 * (never another 5xx), /readyz reports the low disk, the server keeps serving what it has, and no
 * row lacks its bytes and no temp file stays behind.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, usingPostgres, type ProjectKeys, type TestServer } from '../helpers/server.js';
import { auditDataDir } from './audit.js';
import { fuzzAgent, pool, send } from './http-client.js';
import { SOAK_ONLY, report } from './mode.js';
import { healthy } from './server-health.js';

const AS_ROOT = process.getuid?.() === 0;
const TMPFS_MB = 24;
const FILE_BYTES = 700 * 1024;

let mountPoint = '';
let server: TestServer;
let keys: ProjectKeys;

function multipartBody(pubKey: string, data: Buffer): { body: Buffer; contentType: string } {
  const boundary = `full${crypto.randomBytes(6).toString('hex')}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="UPLOADCARE_PUB_KEY"\r\n\r\n${pubKey}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.bin"\r\n\r\n`),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

const skip = SOAK_ONLY || !AS_ROOT || usingPostgres();

beforeAll(async () => {
  if (skip) return;
  mountPoint = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-full-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_MB}m`, 'tmpfs', mountPoint]);
  server = await startServer({
    dataDir: mountPoint,
    env: { STOWAGE_MIN_FREE_BYTES: String(4 * 1024 * 1024), STOWAGE_RATE_UPLOAD_PER_SEC: '0', STOWAGE_RATE_UPLOAD_IP_PER_SEC: '0', STOWAGE_LOG_LEVEL: 'error' },
  });
  keys = await server.createProject();
}, 120_000);

afterAll(async () => {
  await server?.stop();
  if (mountPoint) {
    execFileSync('umount', [mountPoint]);
    fs.rmSync(mountPoint, { recursive: true, force: true });
  }
});

describe.skipIf(skip)('full disk (tmpfs data dir, root only)', () => {
  it(`uploads into a ${TMPFS_MB} MB data dir: 200 until full, then 507 with Retry-After; readiness says low; nothing half-written`, async () => {
    const agent = fuzzAgent(4, 60_000);
    const statuses = new Map<number, number>();
    const refusals: Array<{ status: number; retryAfter: unknown; text: string }> = [];
    const resets: string[] = [];
    await pool(45, 4, async () => {
      const { body, contentType } = multipartBody(keys.public_key, crypto.randomBytes(FILE_BYTES));
      try {
        const a = await send(agent, `${server.upload}/base/`, { method: 'POST', headers: { 'content-type': contentType }, body });
        statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
        if (a.status !== 200) refusals.push({ status: a.status, retryAfter: a.headers['retry-after'], text: a.body.toString('utf8', 0, 200) });
      } catch (err) {
        resets.push(String(err));
      }
    });
    await agent.close();
    const ready = await fetch(`${server.rest}/readyz`);
    const readyBody = (await ready.json()) as Record<string, unknown>;
    report('full-disk', { statuses: Object.fromEntries(statuses), firstRefusal: refusals[0], resets: resets.length, serverErrorLog: server.output().split('\n').filter((l) => l.includes('"level":50')).slice(0, 2).map((l) => l.replace(/"stack":"[^"]*"/, '').slice(0, 600)), readyz: { status: ready.status, ...readyBody } });
    expect(statuses.get(200) ?? 0, 'some uploads fit').toBeGreaterThan(0);
    expect(refusals.length, 'the disk filled up').toBeGreaterThan(0);
    for (const r of refusals) {
      expect(r.status, r.text).toBe(507);
      expect(r.retryAfter, 'Retry-After').toBeDefined();
      expect(r.text).toMatch(/storage|space/i);
    }
    // A body refused before it is read (no space to stage it) may reach a client still sending
    // as a reset; what matters is that none is a 500 and the server stays up.
    expect(ready.status).toBe(503);
    expect(readyBody['disk']).toBe('low');
    expect(await healthy(server)).toBe(true);
    // What was acknowledged is intact; nothing half-written stays.
    const audit = await auditDataDir(server);
    expect(audit.rowsWithoutBytes).toEqual([]);
    expect(audit.tempFiles).toBe(0);
    expect(audit.orphanBlobs).toEqual([]);
  }, 300_000);
});
