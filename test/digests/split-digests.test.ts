/**
 * A large body's two digests in two threads (src/digests/digest-threads.ts): MD5 in one digest
 * thread, SHA-256 in the other, each fed the same ranges of the file just written
 * (src/digests/written-digest.ts). The values must be exactly node's crypto over the same bytes (the
 * CDN ETag and the content address do not change), on both sides of the 4 MiB switch to the
 * threads and whatever the chunk sizes; a range that cannot be read loses the digest for good
 * rather than answering one of part of the bytes.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ThreadDigests } from '../../src/digests/digest-threads.js';
import { FsBlobStore } from '../../src/blobs/fs-store.js';
import { StreamedDigest, digestStored } from '../../src/digests/streamed-digest.js';
import { WrittenBytesDigest } from '../../src/digests/written-digest.js';
import { BatchedFileWriter } from '../../src/writes/batched-file-writer.js';

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
  it('the two threads compute node\'s MD5 and SHA-256 over uneven ranges sent at once', async () => {
    const data = crypto.randomBytes(12 * MiB + 345);
    const file = path.join(dir, 'ranges.bin');
    fs.writeFileSync(file, data);
    const digests = new ThreadDigests();
    const cuts = [0, 5 * MiB, 5 * MiB + 1, 10 * MiB, data.length];
    await Promise.all(cuts.slice(1).map((end, i) => digests.hash(file, cuts[i]!, end - cuts[i]!)));
    expect(await digests.finish()).toEqual({ md5: md5(data), sha256: sha256(data) });
  });

  it('a range past the end of the file fails the digest, and its later ranges and finish fail too', async () => {
    const file = path.join(dir, 'short.bin');
    fs.writeFileSync(file, crypto.randomBytes(MiB));
    const digests = new ThreadDigests();
    await expect(digests.hash(file, 0, 2 * MiB)).rejects.toThrow(/short read/);
    await expect(digests.hash(file, 0, MiB)).rejects.toThrow(/failed earlier/);
    await expect(digests.finish()).rejects.toThrow(/failed earlier/);
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

  it('a body written at an offset of a file (an S3 part in its slot) gets the digests of its own bytes only', async () => {
    const file = path.join(dir, 'slots.bin');
    const slot = 24 * MiB + 12_345;
    // Other slots' bytes on both sides of the one written.
    fs.writeFileSync(file, crypto.randomBytes(3 * slot));
    for (const size of [100_000, 4 * MiB + 1, slot]) {
      const data = crypto.randomBytes(size);
      const digest = new WrittenBytesDigest(file, slot, slot);
      const writer = new BatchedFileWriter(file, {
        flags: 'r+',
        start: slot,
        maxBytes: slot,
        onTooLarge: () => new Error('too large'),
        onChunk: (chunk, n) => digest.received(chunk, n),
        onWritten: (end) => digest.written(end),
        onAllWritten: (n) => digest.allWritten(n),
      });
      await pipeline(chunked(data), writer);
      expect(await digest.digest(writer.size), `${size} bytes`).toEqual({ md5: md5(data), sha256: sha256(data) });
    }
  });
});

/**
 * A body that is never written locally (an S3 upload, a stored object read once): past 4 MiB its
 * chunks go to the two threads in slabs of shared memory (src/digests/streamed-digest.ts), a few
 * slabs per body, so `update` asks the caller to wait when all of them are with the threads.
 */
describe('digests of a body streamed through memory', () => {
  /** Feeds `data` to a StreamedDigest in uneven chunks, waiting when asked; how often it asked. */
  async function streamed(data: Buffer, declaredBytes?: number): Promise<{ digests: { md5: string; sha256: string }; waits: number }> {
    const digest = new StreamedDigest(declaredBytes);
    let waits = 0;
    const chunks = chunked(data);
    for await (const chunk of chunks) {
      const wait = digest.update(chunk as Buffer);
      if (wait) {
        waits++;
        await wait;
      }
    }
    return { digests: await digest.digest(), waits };
  }

  it('gets node\'s MD5 and SHA-256 below, at and above the 4 MiB switch, whatever the chunks', async () => {
    for (const size of [0, 1, 4 * MiB - 1, 4 * MiB, 4 * MiB + 1, 5 * MiB, 24 * MiB + 12_345]) {
      const data = crypto.randomBytes(size);
      const { digests } = await streamed(data);
      expect(digests, `${size} bytes`).toEqual({ md5: md5(data), sha256: sha256(data) });
    }
  });

  it('a body declared large (an S3 part) goes to the threads from its first byte: the main thread hashes none of it', async () => {
    const data = crypto.randomBytes(8 * MiB);
    const expected = { md5: md5(data), sha256: sha256(data) };
    const createHash = vi.spyOn(crypto, 'createHash');
    try {
      const { digests } = await streamed(data, data.length);
      expect(createHash).not.toHaveBeenCalled();
      expect(digests).toEqual(expected);
    } finally {
      createHash.mockRestore();
    }
  });

  it('a large body waits for slabs to come back (memory flat), a small one never waits', async () => {
    expect((await streamed(crypto.randomBytes(4 * MiB))).waits).toBe(0);
    // 32 MiB through four 1 MiB slabs: the chunks must have waited for the threads.
    expect((await streamed(crypto.randomBytes(32 * MiB))).waits).toBeGreaterThan(0);
  });

  it('a stored blob read once (digestStored) gets node\'s digests and size', async () => {
    const store = new FsBlobStore(path.join(dir, 'stored'));
    const data = crypto.randomBytes(9 * MiB + 7);
    await store.put('files/stored', chunked(data), { maxBytes: 64 * MiB, onTooLarge: () => new Error('too large') });
    expect(await digestStored(store, 'files/stored')).toEqual({ size: data.length, md5: md5(data), sha256: sha256(data) });
  });
});
