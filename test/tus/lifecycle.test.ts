/**
 * tus uploads over time: an unfinished upload expires (Upload-Expires) and the periodic sweep
 * drops it and its staged bytes, while a finished upload's file outlives its upload record (and a
 * staging file no upload names goes too); and a node killed (SIGKILL) in the middle of a PATCH
 * resumes from the last offset it made durable.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/use-server.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { request } from '../helpers/http.js';
import { bytes, until } from '../uploads/helpers.js';
import { create, head, patch, stagedFiles, stagedSize, tusUpload } from './helpers.js';

const MiB = 1024 * 1024;

describe('expiration', () => {
  const srv = useServer({ env: { STOWAGE_TUS_TTL_MS: '2000', STOWAGE_TUS_SWEEP_MS: '500' } });

  it('sweeps an expired unfinished upload and its bytes; a finished upload keeps its file', async () => {
    const meta = { UPLOADCARE_PUB_KEY: srv.keys.public_key };
    const c = await create(srv.upload, 1000, meta);
    const url = c.headers.get('location') as string;
    const expires = Date.parse(c.headers.get('upload-expires') as string);
    expect(expires).toBeGreaterThan(Date.now() - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 3000);
    expect((await patch(url, 0, bytes(400))).status).toBe(204);
    const id = url.split('/').pop() as string;
    expect(stagedFiles(srv.server.dataDir)).toContain(id);
    const done = await tusUpload(bytes(500, 2), { endpoint: `${srv.upload}/tus/`, metadata: meta });

    // Past its expiry the upload answers 410 until the sweep forgets it (404), bytes and all.
    // The sweep deletes the row, then the bytes: the 404 can come a moment before they are gone.
    await until(async () => ((await head(url)).status === 404 ? true : undefined), 30_000);
    await until(async () => (stagedFiles(srv.server.dataDir).includes(id) ? undefined : true), 10_000);
    expect((await patch(url, 400, bytes(600))).status).toBe(404);
    await until(async () => ((await head(done.url)).status === 404 ? true : undefined), 30_000);
    const file = await srv.call('GET', `/files/${done.fileUuid}/`);
    expect(file.status).toBe(200);
    expect(file.json.size).toBe(500);
  });

  it('removes a staging file no upload names once it is older than the TTL, and nothing else', async () => {
    const dir = path.join(srv.server.dataDir, 'tus');
    fs.mkdirSync(dir, { recursive: true });
    const orphan = path.join(dir, crypto.randomUUID());
    const other = path.join(dir, 'not-an-upload.txt');
    fs.writeFileSync(orphan, 'left by a crash between the file and the row');
    fs.writeFileSync(other, 'keep');
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(orphan, old, old);
    fs.utimesSync(other, old, old);
    await until(async () => (fs.existsSync(orphan) ? undefined : true), 30_000);
    expect(fs.existsSync(other)).toBe(true);
  });
});

describe('a node killed mid-PATCH', () => {
  const servers: TestServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.stop();
  });

  it('resumes from the last durable offset, and the finished file has every byte', async () => {
    // useServer() does not fit: the node is killed (SIGKILL) and restarted on the same data dir.
    const first = await startServer();
    servers.push(first);
    const keys = await first.createProject();
    const data = bytes(12 * MiB, 9);
    const c = await create(first.upload, data.length, { UPLOADCARE_PUB_KEY: keys.public_key });
    const id = (c.headers.get('location') as string).split('/').pop() as string;
    expect((await patch(`${first.upload}/tus/${id}`, 0, data.subarray(0, MiB))).status).toBe(204);

    // A second PATCH sends 10 MiB of its 11 and stalls; the node dies while it waits for the rest.
    const socket = await openPatch(`${first.upload}/tus/${id}`, MiB, data.length - MiB);
    await new Promise<void>((resolve) => socket.write(data.subarray(MiB, 11 * MiB), () => resolve()));
    await until(async () => (stagedSize(first.dataDir, id) >= 11 * MiB ? true : undefined));
    await first.kill();
    socket.destroy();

    const second = await startServer({ dataDir: first.dataDir, ...(first.schema ? { schema: first.schema } : {}), ...(first.bucket ? { bucket: first.bucket } : {}) });
    servers.push(second);
    const url = `${second.upload}/tus/${id}`;
    const offset = Number((await head(url)).headers.get('upload-offset'));
    // Durable: the first chunk, and the second one's bytes up to its checkpoint (after 8 MiB more);
    // what came after the checkpoint was never recorded and is dropped.
    expect(offset === MiB || (offset >= 9 * MiB && offset < 11 * MiB)).toBe(true);
    const rest = await patch(url, offset, data.subarray(offset));
    expect(rest.status).toBe(204);
    const uuid = rest.headers.get('stowage-file-uuid') as string;
    const got = Buffer.from(await (await fetch(`${second.cdn}/${uuid}/`)).arrayBuffer());
    expect(crypto.createHash('sha256').update(got).digest('hex')).toBe(crypto.createHash('sha256').update(data).digest('hex'));
    expect((await request(`${url}/info/`)).json).toMatchObject({ uuid, size: data.length });
  }, 120_000);
});

async function openPatch(url: string, offset: number, length: number): Promise<net.Socket> {
  const u = new URL(url);
  const socket = net.connect(Number(u.port), u.hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.on('error', () => undefined);
  socket.write(
    `PATCH ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nTus-Resumable: 1.0.0\r\nContent-Type: application/offset+octet-stream\r\n` +
      `Upload-Offset: ${offset}\r\nContent-Length: ${length}\r\n\r\n`,
  );
  return socket;
}
