/**
 * A ~1 GB multipart upload (the stand-in for the 5 GB case, too slow for CI): parts stream in and
 * the completion streams them out again while the server's RSS stays bounded. The bytes are checked
 * through the CDN's strong ETag (the MD5 of the stored file).
 */
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { rssBytes, usingS3 } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { get, postForm, until } from './helpers.js';

const MiB = 1024 * 1024;
const PART = 64 * MiB;
const SIZE = 16 * PART - 12_345; // 16 parts, a short last one
const BLOCK = crypto.randomBytes(MiB);
// A gigabyte per run is too much to leave behind in the temp dir.
const srv = useServer({ removeDataDir: true });

/** Byte `offset..offset+len` of the file: 1 MiB blocks, each stamped with its index. */
function* chunks(offset: number, len: number): Generator<Buffer> {
  let pos = offset;
  const end = offset + len;
  while (pos < end) {
    const index = Math.floor(pos / MiB);
    const block = Buffer.from(BLOCK);
    block.writeUInt32BE(index, 0);
    const from = pos - index * MiB;
    const to = Math.min(MiB, end - index * MiB);
    yield block.subarray(from, to);
    pos += to - from;
  }
}

function partStream(n: number): ReadableStream<Uint8Array> {
  const it = chunks(n * PART, Math.min(PART, SIZE - n * PART));
  return new ReadableStream({
    pull(controller) {
      const next = it.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
  });
}

// With object storage (STOWAGE_TEST_S3) parts bypass the node; test/scale/s3-multipart.test.ts covers that path.
describe.skipIf(usingS3())('a ~1 GB multipart upload', () => {
  it('goes through with the server RSS bounded', async () => {
    const pid = srv.server.child.pid!;
    const baseline = rssBytes(pid);
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 100);
    try {
      const s = await postForm(`${srv.upload}/multipart/start/`, { UPLOADCARE_PUB_KEY: srv.keys.public_key, filename: 'huge.bin', size: String(SIZE), part_size: String(PART), content_type: 'application/octet-stream' });
      expect(s.status).toBe(200);
      const urls = s.json.parts as string[];
      expect(urls).toHaveLength(16);
      // Two parts in flight at a time, as a browser would.
      let next = 0;
      const worker = async () => {
        while (next < urls.length) {
          const n = next++;
          const r = await fetch(urls[n]!, { method: 'PUT', body: partStream(n), duplex: 'half' } as RequestInit);
          expect(r.status).toBe(200);
          await r.arrayBuffer();
        }
      };
      await Promise.all([worker(), worker()]);
      const done = await postForm(`${srv.upload}/multipart/complete/`, { UPLOADCARE_PUB_KEY: srv.keys.public_key, uuid: s.json.uuid });
      expect(done.status).toBe(200);
      expect(done.json).toMatchObject({ uuid: s.json.uuid, size: SIZE, original_filename: 'huge.bin' });

      const info = await get(`${srv.upload}/info/?pub_key=${srv.keys.public_key}&file_id=${s.json.uuid}`);
      expect(info.json.size).toBe(SIZE);
      const md5 = crypto.createHash('md5');
      for (const c of chunks(0, SIZE)) md5.update(c);
      // Past STOWAGE_DIGEST_LATER_BYTES (64 MiB) the MD5 comes from a job after the completion's
      // answer: the CDN sends no ETag until then, and the MD5 once it has run (memory still sampled).
      const etag = await until(async () => {
        const head = await fetch(`${srv.cdn}/${s.json.uuid}/`, { method: 'HEAD' });
        return head.headers.get('etag') ?? undefined;
      }, 60_000, 250);
      expect(etag).toBe(`"${md5.digest('hex')}"`);
    } finally {
      clearInterval(sampler);
    }
    console.log(`multipart 1 GB: RSS baseline ${Math.round(baseline / MiB)} MiB, peak ${Math.round(peak / MiB)} MiB`);
    // Memory does not follow the file: 1 GB went through, the process grew by far less.
    expect(peak - baseline).toBeLessThan(160 * MiB);
  }, 240_000);
});
