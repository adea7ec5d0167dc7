/**
 * A large direct upload (POST /base/) streams through the server without its memory following the
 * body: the chunks node:http hands over are copied into reused batch buffers and freed by a
 * scavenge every few MiB written (writes/), so the server's peak resident set (VmHWM, which no
 * sampling can miss) grows by a small fraction of the body, the later digests' thread included.
 * Before that, dead chunks piled up to V8's external-memory limit and the peak grew by 50-60 MB.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { usingS3 } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { until } from './helpers.js';

const MiB = 1024 * 1024;
const srv = useServer({ removeDataDir: true });

/** The process's peak resident set so far, in bytes (/proc, Linux). */
function peakRss(pid: number): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

// With object storage the body streams to the bucket instead (test/scale covers that path).
describe.skipIf(usingS3())('a 256 MiB direct upload', () => {
  it('raises the server\'s peak RSS by less than 48 MiB, its later digests included', async () => {
    const pid = srv.server.child.pid!;
    const data = crypto.randomBytes(256 * MiB);
    const before = peakRss(pid);
    // The key first, then the file, as curl -F sends them: the body streams to disk as it arrives.
    const form = new FormData();
    form.append('UPLOADCARE_PUB_KEY', srv.keys.public_key);
    form.append('UPLOADCARE_STORE', '1');
    form.append('file', new Blob([data]), 'big.bin');
    const r = await fetch(`${srv.upload}/base/`, { method: 'POST', body: form });
    expect(r.status).toBe(200);
    const uuid = ((await r.json()) as { file: string }).file;
    // Past STOWAGE_DIGEST_LATER_BYTES the MD5 (the CDN's ETag) comes from a job after the answer.
    const etag = await until(async () => (await fetch(`${srv.cdn}/${uuid}/`, { method: 'HEAD' })).headers.get('etag') ?? undefined, 60_000, 250);
    expect(etag).toBe(`"${crypto.createHash('md5').update(data).digest('hex')}"`);
    const grew = peakRss(pid) - before;
    console.log(`direct 256 MiB: peak RSS grew ${(grew / MiB).toFixed(1)} MiB`);
    expect(grew).toBeLessThan(48 * MiB);
  }, 240_000);
});
