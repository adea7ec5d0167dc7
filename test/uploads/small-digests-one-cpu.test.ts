/**
 * A small body's MD5 and SHA-256 on a node that may run on one CPU only are computed on the main
 * thread from the chunks as they pass (src/digests/written-digest.ts): a digest thread would share
 * that one core, and its request, its read of the file back and its reply cost more than the
 * hashing. Moved onto two CPUs, the same node hashes small bodies in a digest thread again, which
 * reads the file back. Watched from outside with strace; the node is moved with `taskset -a -p`,
 * as an operator would. Both ways give the same digests: the ETag is the MD5, and a body uploaded
 * once each way is stored once (its SHA-256 is its content address).
 */
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { haveStrace, traced } from '../helpers/strace.js';
import { uploadBase } from '../helpers/rest.js';
import { useServer } from '../helpers/use-server.js';
import { usingS3 } from '../helpers/server.js';
import { fileRows } from '../reliability/audit.js';

const srv = useServer();

const md5 = (b: Buffer) => crypto.createHash('md5').update(b).digest('hex');

/** Every thread of the server may run on `cpus` only. */
const pin = (cpus: string) => execFileSync('taskset', ['-a', '-p', '-c', cpus, String(srv.server.child.pid)], { stdio: 'ignore' });

/** Uploads `data` under strace; the new file's uuid and the trace lines naming it. */
async function tracedUpload(data: Buffer): Promise<{ uuid: string; lines: string[] }> {
  let uuid = '';
  const lines = await traced(srv.server.child.pid as number, ['-y', '-s', '32', '-e', 'trace=openat,pread64,read'], async () => {
    const up = await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'small.bin', data }], { UPLOADCARE_STORE: '1' });
    expect(up.status, up.text).toBe(200);
    uuid = up.json.file as string;
  });
  return { uuid, lines: lines.filter((l) => l.includes(uuid)) };
}

const blobKeyOf = async (uuid: string) => (await fileRows(srv.server)).find((r) => r.uuid === uuid)?.blob_key;

let haveTaskset = true;
try {
  execFileSync('taskset', ['-V'], { stdio: 'ignore' });
} catch {
  haveTaskset = false;
}

// Local disk only (with S3 no file is written here); needs two CPUs to move the node between.
describe.skipIf(!haveStrace || !haveTaskset || usingS3() || os.availableParallelism() < 2)('small bodies on one CPU: hashed as they pass, never read back', () => {
  it('on one CPU the file is opened once, to write it, and read by no thread; on two a digest thread reads it back; the digests agree', async () => {
    const data = crypto.randomBytes(70_000);
    pin('0');
    let one: { uuid: string; lines: string[] };
    try {
      one = await tracedUpload(data);
    } finally {
      pin(`0-${os.availableParallelism() - 1}`);
    }
    expect(one.lines.filter((l) => /openat\(/.test(l) && !/ENOENT/.test(l))).toHaveLength(1);
    expect(one.lines.filter((l) => /O_RDONLY/.test(l) || /(pread64|read)\(/.test(l))).toEqual([]);

    const two = await tracedUpload(data);
    const reads = two.lines.filter((l) => /pread64\(/.test(l));
    expect(reads.reduce((sum, l) => sum + Number(/= (\d+)$/.exec(l)?.[1] ?? 0), 0)).toBe(70_000);
    expect(reads.filter((l) => l.startsWith(`${srv.server.child.pid} `))).toEqual([]);

    for (const uuid of [one.uuid, two.uuid]) {
      const r = await fetch(`${srv.cdn}/${uuid}/`);
      expect(r.headers.get('etag')).toBe(`"${md5(data)}"`);
      await r.arrayBuffer();
    }
    // The same SHA-256 both ways: the second upload's row names the first one's blob.
    expect(await blobKeyOf(two.uuid)).toBe(await blobKeyOf(one.uuid));
  });
});
