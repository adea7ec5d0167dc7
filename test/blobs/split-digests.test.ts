/**
 * A large direct body's two digests on two cores (docs/performance.md, "1 GiB uploads: the digest
 * chain, the two cores and the peak"): MD5 alone in the digest thread, SHA-256 on the main thread
 * as the chunks pass (src/blobs/written-digest.ts). The values must be exactly node's crypto over
 * the same bytes (the CDN ETag and the content address do not change), on both sides of the 4 MiB
 * switch to the thread and whatever the chunk sizes.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { digestThread } from '../../src/blobs/digest-thread.js';
import { FsBlobStore } from '../../src/blobs/fs-store.js';

const MiB = 1024 * 1024;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stowage-split-digests-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const md5 = (b: Buffer) => crypto.createHash('md5').update(b).digest('hex');
const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

/** `data` as a stream of fresh chunks of uneven sizes (up to 64 KiB, as a socket hands them over). */
function chunked(data: Buffer): Readable {
  let at = 0;
  let i = 0;
  return new Readable({
    read() {
      if (at >= data.length) return this.push(null);
      const len = Math.min([65_536, 1, 4096, 65_000, 17][i++ % 5]!, data.length - at);
      this.push(Buffer.from(data.subarray(at, at + len)));
      at += len;
    },
  });
}

describe('split digests', () => {
  it('the digest thread computes MD5 alone for an MD5-only digest, equal to node\'s over uneven ranges', async () => {
    const data = crypto.randomBytes(12 * MiB + 345);
    const file = path.join(dir, 'ranges.bin');
    fs.writeFileSync(file, data);
    const digest = digestThread.newDigest('md5');
    const cuts = [0, 5 * MiB, 5 * MiB + 1, 10 * MiB, data.length];
    await Promise.all(cuts.slice(1).map((end, i) => digestThread.hash(digest, file, cuts[i]!, end - cuts[i]!)));
    expect(await digestThread.finishMd5(digest)).toBe(md5(data));
  });

  it('a body written to the store gets node\'s MD5 and SHA-256 below, at and above the 4 MiB switch', async () => {
    const store = new FsBlobStore(path.join(dir, 'store'));
    for (const [i, size] of [4 * MiB - 1, 4 * MiB, 4 * MiB + 1, 8 * MiB + 1, 12 * MiB, 24 * MiB + 12_345].entries()) {
      const data = crypto.randomBytes(size);
      const put = await store.put(`files/body-${i}`, chunked(data), { maxBytes: 64 * MiB, onTooLarge: () => new Error('too large'), fresh: true });
      expect({ size: put.size, md5: put.md5, sha256: put.sha256 }).toEqual({ size, md5: md5(data), sha256: sha256(data) });
      expect(fs.readFileSync(store.localPath(`files/body-${i}`)).equals(data)).toBe(true);
    }
  });
});
