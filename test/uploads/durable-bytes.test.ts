/**
 * An upload's bytes are durable before its answer, and written once: straight under their key (no
 * temporary file and rename, which made every small upload change two directories), the file
 * fsynced and its directory fsynced before the 200 goes out. Watched from outside with strace.
 * Also: type sniffing uses the head kept while the bytes streamed in, so a plain file is read back
 * only once, by a digest thread for its digests, while an image is also read for its dimensions and
 * answers the same file info as one read from the store.
 */
import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { haveStrace, traced } from '../helpers/strace.js';
import { uploadBase } from '../helpers/rest.js';
import { useServer } from '../helpers/use-server.js';
import { usingS3 } from '../helpers/server.js';

const srv = useServer();

/** The server's file system calls that matter here, with file names for descriptors (`-y`). */
const tracedFiles = (pid: number, work: () => Promise<void>) =>
  traced(pid, ['-y', '-s', '32', '-e', 'trace=openat,rename,renameat,renameat2,fsync,fdatasync,close,write,writev,access,pread64,read'], work);

/** Index of the first line matching `re` at or after `from`, or -1. */
const find = (lines: string[], re: RegExp, from = 0) => {
  const i = lines.slice(from).findIndex((l) => re.test(l));
  return i < 0 ? -1 : i + from;
};
// Local disk only: with S3 the bytes go to the bucket (its own durability), and no file is written here.
describe.skipIf(!haveStrace || usingS3())('an upload is written once, durably, before its answer', () => {
  it('created under its key (no temp file, no rename), fsynced with its directory before the 200; read back once, off the main thread, for its digests', async () => {
    const pid = srv.server.child.pid as number;
    let uuid = '';
    const lines = await tracedFiles(pid, async () => {
      const up = await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'durable.bin', data: Buffer.alloc(70_000, 0) }], { UPLOADCARE_STORE: '1' });
      expect(up.status).toBe(200);
      uuid = up.json.file as string;
    });
    const key = `files/${uuid.slice(0, 2)}/${uuid}`;
    const created = find(lines, new RegExp(`openat\\(.*/${key}", O_WRONLY\\|O_CREAT\\|O_EXCL`));
    expect(created).toBeGreaterThan(-1);
    expect(lines.filter((l) => /\.part"|rename/.test(l))).toEqual([]);
    const fileSynced = find(lines, new RegExp(`fsync\\(\\d+<[^>]*/${uuid}>\\)\\s*= 0`));
    const dirSynced = find(lines, new RegExp(`fsync\\(\\d+<[^>]*/files/${uuid.slice(0, 2)}>\\)\\s*= 0`));
    const answer = find(lines, /write(v)?\(\d+<(TCP|socket)[^>]*>.*HTTP\/1\.1 200/);
    expect(fileSynced).toBeGreaterThan(created);
    expect(dirSynced).toBeGreaterThan(-1);
    expect(answer).toBeGreaterThan(Math.max(fileSynced, dirSynced));
    // The type was judged from the head kept during the write: the file is opened twice, once to
    // write it and once, read-only, by a digest thread for its MD5 and SHA-256 (one read of the
    // bytes just written, from the page cache, off the main thread: src/digests/written-digest.ts).
    // (An open that found no directory yet, ENOENT, is retried once the directory is made.)
    const opens = lines.filter((l) => l.includes(`/${uuid}"`) && /openat|access/.test(l) && !/ENOENT/.test(l));
    expect(opens).toHaveLength(2);
    expect(opens.filter((l) => /O_RDONLY/.test(l))).toHaveLength(1);
    const reads = lines.filter((l) => new RegExp(`pread64\\(\\d+<[^>]*/${uuid}>`).test(l));
    expect(reads.filter((l) => l.startsWith(`${pid} `))).toEqual([]);
    expect(reads.reduce((sum, l) => sum + Number(/= (\d+)$/.exec(l)?.[1] ?? 0), 0)).toBe(70_000);
    const info = await srv.call('GET', `/files/${uuid}/`);
    expect(info.json).toMatchObject({ mime_type: 'application/octet-stream', is_image: false, size: 70_000, content_info: { mime: { mime: 'application/octet-stream', type: 'application', subtype: 'octet-stream' } } });
  });

  it('an image is still read for its dimensions: is_image, content_info.image and mime type', async () => {
    const png = await sharp({ create: { width: 33, height: 21, channels: 3, background: '#0a0' } }).png().toBuffer();
    const up = await uploadBase(srv.upload, srv.keys.public_key, [{ name: 'pic.png', data: png }], { UPLOADCARE_STORE: '1' });
    expect(up.status).toBe(200);
    const info = await srv.call('GET', `/files/${up.json.file as string}/`);
    expect(info.json).toMatchObject({ mime_type: 'image/png', is_image: true, content_info: { mime: { mime: 'image/png', type: 'image', subtype: 'png' }, image: { width: 33, height: 21, format: 'PNG' } } });
  });
});
