/**
 * A multipart part's 200 says it is stored: its bytes are synced in the upload's data file, then
 * its marker is created under its key and synced with its directory, all before the answer. A part
 * after the first opens the data file once (no mkdir, no second open) and writes its marker in
 * place (no temporary file, no rename). Watched from outside with strace. Also: a marker cut short
 * (a crash while it was written, before its part was acknowledged) counts as a missing part, and a
 * part whose client went away mid-body is not recorded and leaves no descriptor open. A completion
 * reads each marker with one open, one read and one close, and removes the parts with plain unlinks.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { request } from '../helpers/http.js';
import { haveStrace, traced } from '../helpers/strace.js';
import { usingS3 } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { bytes, postForm, until } from './helpers.js';

const PART = 5_242_880;
const srv = useServer();

const start = (size: number) =>
  postForm(`${srv.upload}/multipart/start/`, { UPLOADCARE_PUB_KEY: srv.keys.public_key, filename: 'big.bin', content_type: 'application/octet-stream', size: String(size) });
const complete = (uuid: string) => postForm(`${srv.upload}/multipart/complete/`, { UPLOADCARE_PUB_KEY: srv.keys.public_key, uuid });
const put = (url: string, body: Buffer) => request(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body });

/** Index of the first line matching `re` at or after `from`, or -1. */
const find = (lines: string[], re: RegExp, from = 0) => {
  const i = lines.slice(from).findIndex((l) => re.test(l));
  return i < 0 ? -1 : i + from;
};

// Local disk only: with S3 storage the parts are the bucket's.
describe.skipIf(usingS3())('a multipart part is durable before its 200', () => {
  it.skipIf(!haveStrace)('syncs the part in the data file, then creates its marker in place and syncs it and its directory; one open of the data file', async () => {
    const data = bytes(2 * PART + 100, 21);
    const s = await start(data.length);
    const uuid = s.json.uuid as string;
    const [u1, u2] = s.json.parts as string[];
    expect((await put(u1!, data.subarray(0, PART))).status).toBe(200);
    const dir = `multipart/${uuid.slice(0, 2)}/${uuid}`;
    const lines = await traced(srv.server.child.pid as number, ['-y', '-s', '64', '-e', 'trace=openat,mkdir,rename,renameat,renameat2,fsync,fdatasync,write,writev,pwritev,pwrite64'], async () => {
      expect((await put(u2!, data.subarray(PART, 2 * PART))).status).toBe(200);
    });
    // (The running digest's threads open it too, read-only.)
    const dataOpens = lines.filter((l) => l.includes(`/${dir}/data"`) && /openat/.test(l) && !/O_RDONLY/.test(l));
    expect(dataOpens).toHaveLength(1);
    expect(dataOpens[0]).not.toMatch(/O_CREAT/);
    expect(lines.filter((l) => /mkdir|rename|\.part"/.test(l))).toEqual([]);
    const dataSynced = find(lines, new RegExp(`fdatasync\\(\\d+<[^>]*/${dir}/data>\\)\\s*= 0`));
    const markerCreated = find(lines, new RegExp(`openat\\(.*/${dir}/2\\.done", O_WRONLY\\|O_CREAT\\|O_EXCL`));
    const markerSynced = find(lines, new RegExp(`fsync\\(\\d+<[^>]*/${dir}/2\\.done>\\)\\s*= 0`));
    const dirSynced = find(lines, new RegExp(`fsync\\(\\d+<[^>]*/${dir}>\\)\\s*= 0`));
    const answer = find(lines, /write(v)?\(\d+<(TCP|socket)[^>]*>.*HTTP\/1\.1 200/);
    expect(dataSynced).toBeGreaterThan(-1);
    expect(markerCreated).toBeGreaterThan(dataSynced);
    expect(markerSynced).toBeGreaterThan(markerCreated);
    expect(dirSynced).toBeGreaterThan(-1);
    expect(answer).toBeGreaterThan(Math.max(markerSynced, dirSynced));
  });

  it('counts a marker cut short as a missing part: completion answers 400, and a re-PUT of the part completes', async () => {
    const data = bytes(2 * PART + 100, 22);
    const s = await start(data.length);
    const uuid = s.json.uuid as string;
    const urls = s.json.parts as string[];
    const parts = [data.subarray(0, PART), data.subarray(PART, 2 * PART), data.subarray(2 * PART)];
    for (const [i, u] of urls.entries()) expect((await put(u, parts[i]!)).status).toBe(200);
    // What a crash between the marker's creation and its write leaves.
    const marker = path.join(srv.server.dataDir, 'blobs', 'multipart', uuid.slice(0, 2), uuid, '2.done');
    fs.writeFileSync(marker, '{"si');
    const cut = await complete(uuid);
    expect([cut.status, cut.text]).toEqual([400, 'File size mismatch. Not all parts uploaded?']);
    expect((await put(urls[1]!, parts[1]!)).status).toBe(200);
    const ok = await complete(uuid);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.size).toBe(data.length);
  });

  it('a part whose client goes away mid-body is not recorded, its file is closed, and its re-PUT completes the upload', async () => {
    const data = bytes(2 * PART + 100, 23);
    const s = await start(data.length);
    const uuid = s.json.uuid as string;
    const urls = s.json.parts as string[];
    const parts = [data.subarray(0, PART), data.subarray(PART, 2 * PART), data.subarray(2 * PART)];
    const dataFile = path.join(srv.server.dataDir, 'blobs', 'multipart', uuid.slice(0, 2), uuid, 'data');
    const pid = srv.server.child.pid as number;
    const openOnData = () => fs.readdirSync(`/proc/${pid}/fd`).filter((fd) => {
      try {
        return fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === dataFile;
      } catch {
        return false;
      }
    }).length;
    expect((await put(urls[0]!, parts[0]!)).status).toBe(200);
    await new Promise<void>((resolve) => {
      const req = http.request(urls[1]!, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-length': String(PART) } });
      req.on('error', () => resolve());
      req.write(parts[1]!.subarray(0, PART / 2), () => setTimeout(() => {
        req.destroy();
        resolve();
      }, 200));
    });
    await until(async () => (openOnData() === 0 ? true : undefined), 10_000, 50);
    expect(fs.existsSync(path.join(path.dirname(dataFile), '2.done'))).toBe(false);
    expect((await put(urls[2]!, parts[2]!)).status).toBe(200);
    const missing = await complete(uuid);
    expect([missing.status, missing.text]).toEqual([400, 'File size mismatch. Not all parts uploaded?']);
    expect((await put(urls[1]!, parts[1]!)).status).toBe(200);
    const ok = await complete(uuid);
    expect(ok.status, ok.text).toBe(200);
    const cdn = await fetch(`${srv.cdn}/${uuid}/`);
    expect(Buffer.from(await cdn.arrayBuffer()).equals(data)).toBe(true);
  });
});

describe.skipIf(usingS3())('a multipart completion', () => {
  it.skipIf(!haveStrace)('reads each part\'s marker with one open, one read and one close, and unlinks the markers without looking them up first', async () => {
    const data = bytes(3 * PART + 100, 24);
    const s = await start(data.length);
    const uuid = s.json.uuid as string;
    const urls = s.json.parts as string[];
    for (const [i, u] of urls.entries()) expect((await put(u, data.subarray(i * PART, (i + 1) * PART))).status).toBe(200);
    const dir = `multipart/${uuid.slice(0, 2)}/${uuid}`;
    const lines = await traced(srv.server.child.pid as number, ['-y', '-e', 'trace=openat,read,pread64,close,unlink,unlinkat,newfstatat,lstat,statx'], async () => {
      const done = await complete(uuid);
      expect(done.status, done.text).toBe(200);
    });
    for (let n = 1; n <= urls.length; n++) {
      const marker = `/${dir}/${n}.done`;
      const on = (call: RegExp) => lines.filter((l) => call.test(l) && (l.includes(`${marker}"`) || l.includes(`${marker}>`)));
      expect(on(/openat\(.*O_RDONLY/), marker).toHaveLength(1);
      expect(on(/\bpread64\(/), marker).toHaveLength(1);
      expect(on(/\bread\(/), marker).toEqual([]);
      expect(on(/\bclose\(/), marker).toHaveLength(1);
      expect(on(/\bunlink(at)?\(/), marker).toHaveLength(1);
      expect(on(/\b(newfstatat|lstat|statx)\(/), marker).toEqual([]);
    }
  });
});
