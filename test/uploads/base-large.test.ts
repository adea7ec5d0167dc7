/**
 * Large direct uploads (POST /base/): past 4 MiB a body's MD5 and SHA-256 are computed in the two
 * digest threads, not on the main thread: from the bytes just written on disk
 * (src/digests/written-digest.ts), from the chunks in shared memory with S3 (streamed-digest.ts). Both must
 * still be the whole body's: the CDN's strong ETag is its MD5, and identical bodies share one blob
 * (their SHA-256) while a body differing in its last byte does not. Sizes straddle the switch.
 */
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { uploadBase } from '../helpers/rest.js';
import { fileRows } from '../reliability/audit.js';

const MiB = 1024 * 1024;
const srv = useServer();

const md5 = (b: Buffer) => crypto.createHash('md5').update(b).digest('hex');

async function upload(name: string, data: Buffer): Promise<string> {
  const r = await uploadBase(srv.upload, srv.keys.public_key, [{ name, data }], { UPLOADCARE_STORE: '1' });
  expect(r.status, r.text).toBe(200);
  return r.json.file as string;
}

async function blobKeyOf(uuid: string): Promise<string | null> {
  const row = (await fileRows(srv.server)).find((r) => r.uuid === uuid);
  return row?.blob_key ?? null;
}

describe('large direct uploads: digests from the digest threads', () => {
  it('serves each body byte for byte with its MD5 as the ETag, at sizes around the 4 MiB switch', async () => {
    for (const size of [4 * MiB - 1, 4 * MiB, 4 * MiB + 1, 9 * MiB + 12_345]) {
      const data = crypto.randomBytes(size);
      const uuid = await upload(`big-${size}.bin`, data);
      const r = await fetch(`${srv.cdn}/${uuid}/`);
      expect(r.status).toBe(200);
      expect(r.headers.get('etag'), `size ${size}`).toBe(`"${md5(data)}"`);
      expect(Buffer.from(await r.arrayBuffer()).equals(data), `size ${size}`).toBe(true);
    }
  });

  it('stores identical large bodies once (same SHA-256), and a body differing in its last byte apart', async () => {
    const data = crypto.randomBytes(12 * MiB + 7);
    const first = await upload('a.bin', data);
    const second = await upload('b.bin', data);
    const changed = Buffer.from(data);
    changed[changed.length - 1] ^= 0xff;
    const third = await upload('c.bin', changed);
    const [a, b, c] = await Promise.all([first, second, third].map(blobKeyOf));
    expect(a).not.toBeNull();
    expect(b).toBe(a);
    expect(c).not.toBe(a);
  });
});
