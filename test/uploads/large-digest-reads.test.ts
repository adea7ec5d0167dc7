/**
 * A large direct body's MD5 is computed in the digest thread from the bytes just written
 * (src/blobs/written-digest.ts), handed over 4 MiB at a time rather than one request per 256 KiB
 * batch written: each request is a message each way between the threads and an open, reads and a
 * close of the file in the thread (docs/performance.md, "1 GiB uploads: fewer round trips").
 * Watched from outside with strace: the thread opens the file once per 4 MiB step (plus the tail),
 * and the answer's MD5 (the CDN's ETag) is still the whole body's.
 */
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { haveStrace, traced } from '../helpers/strace.js';
import { uploadBase } from '../helpers/rest.js';
import { useServer } from '../helpers/use-server.js';
import { usingS3 } from '../helpers/server.js';

const MiB = 1024 * 1024;
const srv = useServer();

const md5 = (b: Buffer) => crypto.createHash('md5').update(b).digest('hex');

// Local disk only: with S3 the body is not written to a local file.
describe.skipIf(!haveStrace || usingS3())('a large direct body is hashed in 4 MiB steps', () => {
  it('the digest thread reads the 20 MiB file back in a handful of opens, and the ETag is its MD5', async () => {
    const data = crypto.randomBytes(20 * MiB + 12_345);
    let uuid = '';
    const lines = await traced(srv.server.child.pid as number, ['-y', '-s', '200', '-e', 'trace=openat'], async () => {
      const up = await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'steps.bin', data }], { UPLOADCARE_STORE: '1' });
      expect(up.status, up.text).toBe(200);
      uuid = up.json.file as string;
    });
    // Read-only opens of the body's file: the digest thread's, one per request. Batch by batch
    // (256 KiB, after the first 4 MiB hashed inline) that was 64 of them for this body.
    const reads = lines.filter((l) => l.includes(uuid) && /O_RDONLY/.test(l) && !/ENOENT/.test(l));
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.length).toBeLessThanOrEqual(6);
    const r = await fetch(`${srv.cdn}/${uuid}/`);
    expect(r.headers.get('etag')).toBe(`"${md5(data)}"`);
    expect(Buffer.from(await r.arrayBuffer()).equals(data)).toBe(true);
  });
});
