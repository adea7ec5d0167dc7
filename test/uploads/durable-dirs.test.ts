/**
 * A directory made on the way to a new file is named durably in its parent before the file's
 * bytes are acknowledged: the file's own fsync and its directory's do not cover the entry of a
 * directory `mkdir -p` just made (a multipart upload's own directory, a new two-character prefix
 * under files/), and a crash could drop it with every file under it. Watched from outside with
 * strace on a fresh server, where every one of those directories is new.
 */
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { haveStrace, traced } from '../helpers/strace.js';
import { uploadBase } from '../helpers/rest.js';
import { useServer } from '../helpers/use-server.js';
import { usingS3 } from '../helpers/server.js';
import { postForm } from './helpers.js';
import { CreateMultipartUploadCommand, UploadPartCommand } from '@aws-sdk/client-s3';
import { s3Client, S3_SERVER } from '../s3/helpers.js';

const srv = useServer({ env: S3_SERVER.env });

const syncsAndAnswers = (pid: number, work: () => Promise<void>) =>
  traced(pid, ['-y', '-s', '64', '-e', 'trace=mkdir,mkdirat,fsync,fdatasync,write,writev'], work);

/** Index of the first fsync of the directory `dir` (its path ends so) that succeeded, or -1. */
const syncOf = (lines: string[], dir: string) => lines.findIndex((l) => new RegExp(`fsync\\(\\d+<[^>]*${dir}>\\)\\s*= 0`).test(l));
const answer = (lines: string[]) => lines.findIndex((l) => /write(v)?\(\d+<(TCP|socket)[^>]*>.*HTTP\/1\.1 200/.test(l));

// Local disk only: with S3 the bytes go to the bucket, and no directory is made here.
describe.skipIf(!haveStrace || usingS3())('directories made for new files are durable before the answer', () => {
  it("a multipart upload's first part: its directory and the prefix's are synced in their parents before the 200", async () => {
    const start = await postForm(`${srv.upload}/multipart/start/`, {
      UPLOADCARE_PUB_KEY: srv.keys.public_key,
      filename: 'dirs.bin',
      size: String(11 * 1024 * 1024),
      part_size: String(5 * 1024 * 1024),
      content_type: 'application/octet-stream',
    });
    expect(start.status).toBe(200);
    const uuid = start.json.uuid as string;
    const url = (start.json.parts as string[])[0] as string;
    const lines = await syncsAndAnswers(srv.server.child.pid as number, async () => {
      const r = await fetch(url, { method: 'PUT', body: crypto.randomBytes(5 * 1024 * 1024) });
      expect(r.status).toBe(200);
    });
    const ok = answer(lines);
    expect(ok).toBeGreaterThan(-1);
    // multipart/<xx>/<uuid>/ is named in multipart/<xx>/, which is named in multipart/.
    for (const dir of [`/multipart/${uuid.slice(0, 2)}`, '/multipart']) {
      const synced = syncOf(lines, dir);
      expect(synced, `fsync of ${dir}`).toBeGreaterThan(-1);
      expect(synced).toBeLessThan(ok);
    }
  });

  it('a blob under a two-character prefix not seen before: files/ is synced before the 200', async () => {
    // Upload until one lands under a prefix this server had not made yet (its mkdir is in the trace).
    for (let i = 0; i < 10; i++) {
      let uuid = '';
      const lines = await syncsAndAnswers(srv.server.child.pid as number, async () => {
        const up = await uploadBase(srv.upload, srv.keys.public_key, [{ name: `p${i}.bin`, data: crypto.randomBytes(4096) }], { UPLOADCARE_STORE: '1' });
        expect(up.status).toBe(200);
        uuid = up.json.file as string;
      });
      if (!lines.some((l) => new RegExp(`mkdir(at)?\\(.*/files/${uuid.slice(0, 2)}",.*= 0`).test(l))) continue;
      const synced = syncOf(lines, '/files');
      expect(synced, 'fsync of files/').toBeGreaterThan(-1);
      expect(synced).toBeLessThan(answer(lines));
      return;
    }
    throw new Error('every upload landed under a prefix already made');
  });

  it("an S3 upload's first part: its data file's directory, that directory's own entry and the prefix's are synced before the 200", async () => {
    const client = s3Client(srv.s3, srv.keys);
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: srv.keys.public_key, Key: 'dirs/s3.bin' }));
    const id = UploadId as string;
    const lines = await syncsAndAnswers(srv.server.child.pid as number, async () => {
      await client.send(new UploadPartCommand({ Bucket: srv.keys.public_key, Key: 'dirs/s3.bin', UploadId: id, PartNumber: 1, Body: crypto.randomBytes(5 * 1024 * 1024) }));
    });
    const ok = answer(lines);
    expect(ok).toBeGreaterThan(-1);
    // s3-multipart/<xx>/<id>/data: its name is in <id>/, <id> in <xx>/, <xx> in s3-multipart/.
    for (const dir of [`/s3-multipart/${id.slice(0, 2)}/${id}`, `/s3-multipart/${id.slice(0, 2)}`, '/s3-multipart']) {
      const synced = syncOf(lines, dir);
      expect(synced, `fsync of ${dir}`).toBeGreaterThan(-1);
      expect(synced).toBeLessThan(ok);
    }
  });
});
