/**
 * The originals cache (src/delivery/originals.ts): raw delivery and decoding read originals from
 * memory. Whether a response came from memory or from the store is told by replacing the stored
 * bytes behind the server's back: memory still answers with the old bytes, the store with the new.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { overwriteBlob, startServer, usingS3, type ProjectKeys, type TestServer } from '../helpers/server.js';
import * as fx from '../media/fixtures.js';
import { get, put } from './helpers.js';

const KIB = 1024;
const blobKey = (uuid: string) => `files/${uuid.slice(0, 2)}/${uuid}`;
const servers: TestServer[] = [];

// useServer() does not fit: two servers with different cache settings start side by side.
async function start(env: Record<string, string> = {}): Promise<{ server: TestServer; keys: ProjectKeys }> {
  const server = await startServer({ env });
  servers.push(server);
  return { server, keys: await server.createProject() };
}

/** Uploads `bytes`, reads it once through the CDN (a miss fills the cache), then replaces the stored bytes. */
async function uploadReadReplace(s: { server: TestServer; keys: ProjectKeys }, bytes: Buffer): Promise<{ uuid: string; replacement: Buffer }> {
  const uuid = await put(s.server, s.keys, 'f.bin', bytes);
  expect((await get(s.server, `/${uuid}/`)).body.equals(bytes)).toBe(true);
  const replacement = crypto.randomBytes(bytes.length);
  await overwriteBlob(s.server, blobKey(uuid), replacement);
  return { uuid, replacement };
}

let cached: { server: TestServer; keys: ProjectKeys };
let uncached: { server: TestServer; keys: ProjectKeys };

beforeAll(async () => {
  [cached, uncached] = await Promise.all([start(), start({ STOWAGE_CDN_ORIGINALS_CACHE_BYTES: '0' })]);
}, 60_000);
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

describe('originals cache: raw delivery', () => {
  it('serves a 1 MiB original from memory once read (the store is not read again)', async () => {
    const bytes = crypto.randomBytes(1024 * KIB);
    const { uuid } = await uploadReadReplace(cached, bytes);
    const again = await get(cached.server, `/${uuid}/`);
    expect(again.status).toBe(200);
    expect(again.headers.get('content-length')).toBe(String(bytes.length));
    expect(again.body.equals(bytes)).toBe(true);
  });

  it('reads the store on every request when the cache is off (STOWAGE_CDN_ORIGINALS_CACHE_BYTES=0)', async () => {
    const { uuid, replacement } = await uploadReadReplace(uncached, crypto.randomBytes(100 * KIB));
    expect((await get(uncached.server, `/${uuid}/`)).body.equals(replacement)).toBe(true);
  });

  it('answers ranges, HEAD and 416 the same from memory as from the store', async () => {
    const bytes = crypto.randomBytes(300 * KIB);
    const ids = [await put(cached.server, cached.keys, 'r.bin', bytes), await put(uncached.server, uncached.keys, 'r.bin', bytes)];
    const servers = [cached.server, uncached.server];
    const cases: Array<[string, number, Buffer | null]> = [
      ['bytes=0-0', 206, bytes.subarray(0, 1)],
      ['bytes=1000-1999', 206, bytes.subarray(1000, 2000)],
      ['bytes=-7', 206, bytes.subarray(bytes.length - 7)],
      [`bytes=${bytes.length - 3}-`, 206, bytes.subarray(bytes.length - 3)],
      [`bytes=${bytes.length}-`, 416, null],
    ];
    for (const [range, status, want] of cases) {
      for (let i = 0; i < 2; i++) {
        const r = await get(servers[i]!, `/${ids[i]}/`, { range });
        expect(r.status, `${range} on server ${i}`).toBe(status);
        if (want) {
          expect(r.body.equals(want), `${range} on server ${i}`).toBe(true);
          expect(r.headers.get('content-length')).toBe(String(want.length));
        }
      }
    }
    const head = await get(cached.server, `/${ids[0]}/`, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(bytes.length));
    expect(head.body.length).toBe(0);
  });

  it('streams originals above STOWAGE_CDN_ORIGINALS_ITEM_MAX_BYTES from the store and keeps smaller ones', async () => {
    const s = await start({ STOWAGE_CDN_ORIGINALS_ITEM_MAX_BYTES: String(64 * KIB) });
    const big = await uploadReadReplace(s, crypto.randomBytes(200 * KIB));
    const small = crypto.randomBytes(10 * KIB);
    const kept = await uploadReadReplace(s, small);
    expect((await get(s.server, `/${big.uuid}/`)).body.equals(big.replacement)).toBe(true);
    expect((await get(s.server, `/${kept.uuid}/`)).body.equals(small)).toBe(true);
  });

  it('stays within STOWAGE_CDN_ORIGINALS_CACHE_BYTES by evicting the least recently used original', async () => {
    // Room for two 100 KiB originals, not three.
    const s = await start({ STOWAGE_CDN_ORIGINALS_CACHE_BYTES: String(250 * KIB) });
    const files = [crypto.randomBytes(100 * KIB), crypto.randomBytes(100 * KIB), crypto.randomBytes(100 * KIB)];
    const ids: string[] = [];
    for (const f of files) ids.push(await put(s.server, s.keys, 'e.bin', f));
    await get(s.server, `/${ids[0]}/`);
    await get(s.server, `/${ids[1]}/`);
    await get(s.server, `/${ids[0]}/`); // the first is now more recent than the second
    await get(s.server, `/${ids[2]}/`); // over budget: the second goes
    const replaced = files.map(() => crypto.randomBytes(100 * KIB));
    for (let i = 0; i < 3; i++) await overwriteBlob(s.server, blobKey(ids[i]!), replaced[i]!);
    // The two kept ones first: reading the evicted one fills the cache again and evicts another.
    expect((await get(s.server, `/${ids[0]}/`)).body.equals(files[0]!)).toBe(true);
    expect((await get(s.server, `/${ids[2]}/`)).body.equals(files[2]!)).toBe(true);
    expect((await get(s.server, `/${ids[1]}/`)).body.equals(replaced[1]!)).toBe(true);
  });

  it('streams the rest when more cold originals are requested at once than the cache can read', async () => {
    // Room to read three 100 KiB originals at a time; twelve arrive together.
    const s = await start({ STOWAGE_CDN_ORIGINALS_CACHE_BYTES: String(300 * KIB) });
    const files = Array.from({ length: 12 }, () => crypto.randomBytes(100 * KIB));
    const ids: string[] = [];
    for (const f of files) ids.push(await put(s.server, s.keys, 'c.bin', f));
    const got = await Promise.all(ids.map((id) => get(s.server, `/${id}/`)));
    got.forEach((r, i) => {
      expect(r.status).toBe(200);
      expect(r.body.equals(files[i]!), `file ${i}`).toBe(true);
    });
  });

  it('gives every one of many concurrent first requests the whole file', async () => {
    const bytes = crypto.randomBytes(2048 * KIB);
    const uuid = await put(cached.server, cached.keys, 'burst.bin', bytes);
    const all = await Promise.all(Array.from({ length: 20 }, () => get(cached.server, `/${uuid}/`)));
    for (const r of all) {
      expect(r.status).toBe(200);
      expect(r.body.equals(bytes)).toBe(true);
    }
  });
});

describe('originals cache: image processing', () => {
  it('renders the same bytes from memory as from the store (resize, webp, json, EXIF kept)', async () => {
    const photo = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#3a7bd5' } })
      .composite([{ input: Buffer.from('<svg width="640" height="480"><circle cx="200" cy="200" r="120" fill="#f5a623"/></svg>'), top: 0, left: 0 }])
      .withExif({ IFD0: { Make: 'StowageCam' } })
      .jpeg({ quality: 85 })
      .toBuffer();
    const ids = [await put(cached.server, cached.keys, 'p.jpg', photo), await put(uncached.server, uncached.keys, 'p.jpg', photo)];
    for (const ops of ['-/resize/200x/', '-/preview/100x100/-/format/webp/', '-/json/', '-/strip_meta/none/-/resize/50x/', '-/crop/100x100/center/-/grayscale/']) {
      const [a, b] = [await get(cached.server, `/${ids[0]}/${ops}`), await get(uncached.server, `/${ids[1]}/${ops}`)];
      expect(a.status, ops).toBe(200);
      expect(b.status, ops).toBe(200);
      if (ops === '-/json/') expect({ ...JSON.parse(a.text), id: null }).toEqual({ ...JSON.parse(b.text), id: null });
      else expect(a.body.equals(b.body), ops).toBe(true);
    }
    const kept = await sharp((await get(cached.server, `/${ids[0]}/-/strip_meta/none/-/resize/50x/`)).body).metadata();
    expect(kept.exif?.toString('latin1')).toContain('StowageCam');
  });

  it('decodes from memory: a new transform after the stored bytes change still shows the first image', async () => {
    const red = await sharp({ create: { width: 40, height: 40, channels: 3, background: '#ff0000' } }).png().toBuffer();
    const blue = await sharp({ create: { width: 40, height: 40, channels: 3, background: '#0000ff' } }).png().toBuffer();
    const colourOf = async (body: Buffer) => [...(await sharp(body).raw().toBuffer()).subarray(0, 3)];
    for (const [s, want] of [[cached, [255, 0, 0]], [uncached, [0, 0, 255]]] as const) {
      const uuid = await put(s.server, s.keys, 'red.png', red);
      expect(await colourOf((await get(s.server, `/${uuid}/-/resize/20x/`)).body)).toEqual([255, 0, 0]);
      await overwriteBlob(s.server, blobKey(uuid), blue);
      const after = await get(s.server, `/${uuid}/-/resize/10x/-/format/png/`);
      expect(after.status).toBe(200);
      expect(await colourOf(after.body)).toEqual(want);
    }
  });

  it('answers alike on the first and the second request once header facts are remembered', async () => {
    const text = await put(cached.server, cached.keys, 'a.txt', 'just text\n');
    for (let i = 0; i < 2; i++) expect((await get(cached.server, `/${text}/-/resize/10x/`)).status).toBe(400);
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#00ff00' } }).png().toBuffer();
    const img = await put(cached.server, cached.keys, 'g.png', png);
    for (let i = 0; i < 2; i++) {
      const r = await get(cached.server, `/${img}/-/resize/32x/`);
      expect(r.status).toBe(200);
      expect((await sharp(r.body).metadata()).width).toBe(32);
    }
  });
});

describe.runIf(usingS3())('temporary copies (object storage)', () => {
  it('are made under <dataDir>/spool and removed after every render, failed ones included', async () => {
    const gif = fs.readFileSync(await fx.animatedGif());
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#00ff00' } }).png().toBuffer();
    const strayBefore = fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith('stowage-src-')).length;
    for (const s of [cached, uncached]) {
      const g = await put(s.server, s.keys, 'a.gif', gif);
      const p = await put(s.server, s.keys, 'p.png', png);
      // ffmpeg reads a file: always a temporary copy; without the originals cache, every render needs one.
      expect((await get(s.server, `/${g}/gif2video/`)).status).toBe(200);
      expect((await get(s.server, `/${p}/-/resize/20x/-/overlay/${p}/50px50p/center/`)).status).toBe(200);
      expect((await get(s.server, `/${p}/gif2video/`)).status).toBe(400); // refused after its source was opened
      const spool = path.join(s.server.dataDir, 'spool');
      expect(fs.existsSync(spool)).toBe(true);
      // A copy is released when its render has really ended, which may be just after the client
      // read the whole answer: wait for it, bounded (a copy that is never removed still fails).
      await vi.waitFor(() => expect(fs.readdirSync(spool)).toEqual([]), { timeout: 5_000, interval: 25 });
    }
    expect(fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith('stowage-src-')).length).toBe(strayBefore);
  }, 60_000);
});
