/**
 * No anonymous disk writes on /base/: an unknown key in the query string is
 * refused before the body is read, an unknown key field as soon as it arrives, and file bytes that
 * arrive before any known key are bounded per client address and in all. Measured on the bytes
 * the server writes into its data dir while the request body is still open.
 */
import fs from 'node:fs';
import path from 'node:path';
import { uploadFile } from '@uploadcare/upload-client';
import { describe, expect, it } from 'vitest';
import { usingS3 } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { blobTreeBytes, bytes, sleep, until } from './helpers.js';
import { StreamedUpload, type Answer } from './streamed-upload.js';

const PER_IP = 1024 * 1024;
const TOTAL = 1536 * 1024;
const KIB = 1024;

const srv = useServer({
  env: {
    STOWAGE_ANONYMOUS_STAGING_PER_IP_BYTES: String(PER_IP),
    STOWAGE_ANONYMOUS_STAGING_TOTAL_BYTES: String(TOTAL),
    // Clients at other addresses arrive through a "proxy" on loopback.
    STOWAGE_TRUSTED_PROXIES: '127.0.0.1',
  },
});

/** Bytes the server holds in its data dir's blob tree right now (staging temp files and blobs). */
const bytesOnDisk = () => blobTreeBytes(srv.server.dataDir);

/** Bytes written to the blob store since `base` (an upload's bytes are written in place under their key). */
function bytesSince(base: number): number {
  try {
    return bytesOnDisk() - base;
  } catch {
    return 0; // a file or directory vanished between readdir and stat: look again
  }
}

/**
 * Samples bytesOnDisk() until stopped; returns the largest growth over the starting figure. With
 * object storage the bytes go to the bucket, not the data dir: there only the answers are checked.
 */
function watchDisk(): { stop(): number } {
  if (usingS3()) return { stop: () => 0 };
  const base = bytesOnDisk();
  let peak = 0;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, bytesOnDisk() - base);
    } catch {
      // a temp file vanished between readdir and stat
    }
  }, 10);
  return {
    stop: () => {
      clearInterval(timer);
      return peak;
    },
  };
}

/** Waits (bounded) for the answer of a request whose body is still open. */
function answeredWithin(u: StreamedUpload, ms: number): Promise<Answer | 'no answer'> {
  return Promise.race([u.answer, sleep(ms).then(() => 'no answer' as const)]);
}

const fwd = (ip: string) => ({ 'x-forwarded-for': ip });

describe('a key in the query string', () => {
  it('unknown: 403 before the body is read, nothing written', async () => {
    for (const query of ['?UPLOADCARE_PUB_KEY=nosuchkey000', '?pub_key=nosuchkey000&jsonerrors=0']) {
      const disk = watchDisk();
      const u = new StreamedUpload(`${srv.upload}/base/${query}`);
      await u.file(2 * PER_IP);
      const answer = await answeredWithin(u, 10_000);
      u.destroy();
      expect(answer).toEqual({ status: 403, text: 'UPLOADCARE_PUB_KEY is invalid.' });
      if (!usingS3()) expect(disk.stop()).toBe(0);
    }
  });

  it('known: the body may carry the file before any key field, whatever its size', async () => {
    const u = new StreamedUpload(`${srv.upload}/base/?UPLOADCARE_PUB_KEY=${srv.keys.public_key}`);
    await u.file(2 * PER_IP);
    const answer = await u.end();
    expect(answer.status, answer.text).toBe(200);
    expect(JSON.parse(answer.text).file).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('a key field in the body', () => {
  it('unknown, before the file: 403 as it arrives, the file is never staged', async () => {
    const disk = watchDisk();
    const u = new StreamedUpload(`${srv.upload}/base/`, fwd('198.51.100.10'));
    await u.field('UPLOADCARE_PUB_KEY', 'nosuchkey000');
    await u.file(2 * PER_IP);
    const answer = await answeredWithin(u, 10_000);
    u.destroy();
    expect(answer).toEqual({ status: 403, text: 'UPLOADCARE_PUB_KEY is invalid.' });
    if (!usingS3()) expect(disk.stop()).toBe(0);
  });

  it('after the file: works while the file fits the anonymous budget, and the budget is given back', async () => {
    for (let i = 0; i < 3; i++) {
      const u = new StreamedUpload(`${srv.upload}/base/`, fwd('198.51.100.11'));
      await u.file(PER_IP - 64 * KIB);
      await u.field('UPLOADCARE_PUB_KEY', srv.keys.public_key);
      const answer = await u.end();
      expect(answer.status, answer.text).toBe(200);
    }
  });
});

describe('file bytes before any key', () => {
  it('stop at the per-address budget with a 403 while the body is still open', async () => {
    const disk = watchDisk();
    const u = new StreamedUpload(`${srv.upload}/base/`, fwd('198.51.100.12'));
    await u.file(4 * PER_IP);
    const answer = await answeredWithin(u, 10_000);
    const peak = disk.stop();
    u.destroy();
    expect(answer).toMatchObject({ status: 403 });
    expect((answer as Answer).text).toMatch(/^UPLOADCARE_PUB_KEY is required before the file/);
    if (!usingS3()) {
      // The budget plus at most one chunk in flight; nothing is left behind.
      expect(peak).toBeLessThanOrEqual(PER_IP + 64 * KIB);
      await until(async () => (fs.readdirSync(path.join(srv.server.dataDir, 'blobs', '.tmp')).length === 0 ? true : undefined), 5000);
    }
  });

  it('count per client address and in all, across concurrent requests', async () => {
    // A holds 900 KiB without a key; B (another address) then passes the total, C (A's address) A's share.
    const base = usingS3() ? 0 : bytesOnDisk();
    const a = new StreamedUpload(`${srv.upload}/base/`, fwd('198.51.100.20'));
    await a.file(900 * KIB);
    if (!usingS3()) await until(async () => (bytesSince(base) >= 880 * KIB ? true : undefined), 10_000, 20);
    else await sleep(1000);

    const b = new StreamedUpload(`${srv.upload}/base/`, fwd('198.51.100.21'));
    await b.file(900 * KIB);
    const refusedB = await answeredWithin(b, 10_000);
    b.destroy();
    expect(refusedB).toMatchObject({ status: 403 });

    const c = new StreamedUpload(`${srv.upload}/base/`, fwd('198.51.100.20'));
    await c.file(300 * KIB);
    const refusedC = await answeredWithin(c, 10_000);
    c.destroy();
    expect(refusedC).toMatchObject({ status: 403 });

    // Under both budgets another address still gets through, and A completes once its key arrives.
    const d = new StreamedUpload(`${srv.upload}/base/`, fwd('198.51.100.22'));
    await d.file(400 * KIB);
    await d.field('UPLOADCARE_PUB_KEY', srv.keys.public_key);
    expect((await d.end()).status).toBe(200);
    await a.field('UPLOADCARE_PUB_KEY', srv.keys.public_key);
    expect((await a.end()).status).toBe(200);
  });

  it('the official JS client names its key in X-UC-User-Agent, so its files are not bounded', async () => {
    const data = bytes(3 * PER_IP, 11);
    const file = await uploadFile(data, { publicKey: srv.keys.public_key, baseURL: srv.upload, baseCDN: srv.cdn, fileName: 'sdk.bin', multipartMinFileSize: 100 * PER_IP });
    expect(file.size).toBe(data.length);
  });
});
